"""The HTML report of `gpu-dpsyn evaluate --report` (page.py assembles it)."""
from .page import NOTICE, build_report
from .privacy import check_ledger

__all__ = ["NOTICE", "build_report", "check_ledger"]
