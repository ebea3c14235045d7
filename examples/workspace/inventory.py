"""Stock kept by the shop: item name -> (quantity, unit price)."""

STOCK = {}


def add_item(name, quantity, unit_price):
    """Add `quantity` units of `name` at `unit_price` each."""
    held, _ = STOCK.get(name, (0, unit_price))
    STOCK[name] = (held + quantity, unit_price)


def total_value():
    """The value of everything in stock."""
    return sum(quantity * price for quantity, price in STOCK.values())
