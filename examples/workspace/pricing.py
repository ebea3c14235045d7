"""Prices and discounts."""


def apply_discount(price, percent):
    """The price after taking `percent` per cent off."""
    return price * (100 - percent) / 100


def with_tax(price, rate=0.2):
    return price * (1 + rate)
