"""The HTML report of `gpu-dpsyn evaluate --report` (page.py assembles it)."""
from gpu_dpsyn.evaluation.report.page import NOTICE, build_report
from gpu_dpsyn.evaluation.report.privacy import check_ledger

__all__ = ["NOTICE", "build_report", "check_ledger"]
