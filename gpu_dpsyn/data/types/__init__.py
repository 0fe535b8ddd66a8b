"""Column types beyond categorical / numeric / id, each a public rule from the schema.

* support.py: the exact values an integer column can take (a list, a step, HHMM clock
  values); decoding picks among them inside the bin, encoding refuses anything else.
* datetime.py: timestamps binned on their int64 epoch value by a calendar unit or a bin
  count, decoded back to datetime64 in the schema's time zone; date_repair.py: their
  values under the row-local rule, each read on its own; date_output.py: their text in
  the column's "format", written by NumPy.
* derived.py: columns computed after synthesis from another column by a fixed public
  operation; never measured, so they cost no budget.
* numeric.py: a numeric column's bins from its min / max and bin count, or its edges.
* quantile_bins.py: `"bins": {"private_quantiles": K}`, numeric bins whose edges fit()
  chooses privately on a public grid (the mechanism: quantiles.py).
"""
