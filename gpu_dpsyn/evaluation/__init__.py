"""How close a synthetic table is to the real one: fidelity scores, ML utility and the
HTML report.  Reads the real table on purpose: its output is not private."""

# the report page's title: what marks an earlier report that --report may replace
REPORT_TITLE = "gpu_dpsyn evaluation report"
