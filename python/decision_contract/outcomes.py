"""Tool outcomes: deliverable contracts, typed violations and the advisory report, as
``decision outcomes check|validate|report --format json`` prints them."""

from ._native import Contracts
from ._native import outcomes_check as check
from ._native import outcomes_report as report

__all__ = ["Contracts", "check", "report"]
