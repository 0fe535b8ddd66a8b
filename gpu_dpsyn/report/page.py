"""`gpu-dpsyn evaluate --report`: one self-contained HTML page (PNG plots inline)."""
from __future__ import annotations

import base64
import html
import io

import numpy as np
import pandas as pd

from .encoding import encode
from .errors import DPSynError
from .evaluate import (density_score, ml_rows, ml_utility, per_marginal_tvd, range_query_score,
                       tvd_codes)
from .schema import Schema
from .types.datetime import from_epoch


# the page shows real row counts and histograms: it must not travel with the release
NOTICE = ("<div class='notice'><strong>Not for publication.</strong> This report contains "
          "statistics of the REAL (private) data: row counts, histograms and TVDs computed on "
          "it carry no privacy guarantee. Only the synthetic table and the privacy ledger are "
          "meant for release.</div>")


def _plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise DPSynError("the HTML report needs matplotlib: pip install 'gpu_dpsyn[report]'") \
            from None
    return plt


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    _plt().close(fig)
    return '<img src="data:image/png;base64,' + base64.b64encode(buf.getvalue()).decode() + '">'


def _labels(col, size: int) -> list:
    if col.kind == "categorical":
        labels = [str(v) for v in col.values]
    elif col.kind == "datetime":
        starts = np.asarray(col.edges[:-1], dtype=np.int64)
        labels = [str(t) for t in from_epoch(starts, np.zeros(len(starts), bool), col)]
    else:
        labels = [f"{e:g}" for e in col.edges[:-1]]
    return (labels + ["missing"])[:size]


def _histograms(real, syn, schema: Schema) -> str:
    plt = _plt()
    cols = schema.synth_columns
    ncol = 3
    nrow = (len(cols) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 2.6 * nrow), squeeze=False)
    for ax, col, r, s in zip(axes.flat, cols, real, syn):
        pr = np.bincount(r, minlength=col.size) / len(r)
        ps = np.bincount(s, minlength=col.size) / len(s)
        x = np.arange(col.size)
        ax.bar(x - 0.2, pr, 0.4, label="real")
        ax.bar(x + 0.2, ps, 0.4, label="synthetic")
        ax.set_title(col.name, fontsize=10)
        if col.size <= 20:
            ax.set_xticks(x, _labels(col, col.size), rotation=60, fontsize=7)
        else:
            ax.set_xticks([])
    for ax in list(axes.flat)[len(cols):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def _convergence(history) -> str:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot(range(len(history)), history, marker=".")
    ax.set_xlabel("GUM iteration")
    ax.set_ylabel("mean TVD to the noisy targets")
    if min(history) > 0:  # zero when every target was appended rather than fitted
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    return _png(fig)


def _table(rows, header) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _ml_section(res: dict) -> list:
    kind = ("HistGradientBoostingClassifier" if res["task"] == "classification"
            else "HistGradientBoostingRegressor")
    rows = ml_rows(res)
    if "majority_accuracy" in res:
        rows.append(("accuracy of always the commonest class", f"{res['majority_accuracy']:.4f}",
                     "", ""))
    return [f"<h2>Machine-learning utility: predicting {html.escape(res['target'])}</h2>",
            f"<p>{kind} (scikit-learn) trained on {res['train_rows']['real']:,} real rows "
            f"and on the {res['train_rows']['synthetic']:,} synthetic rows, both tested on "
            f"the {res['test_rows']:,} real rows held out from the first; "
            "gap = real - synthetic.</p>",
            _table(rows, ["metric", "train on real", "train on synthetic", "gap"])]


def build_report(real: pd.DataFrame, syn: pd.DataFrame, schema: Schema, run: dict | None = None,
                 top: int = 25, target: str | None = None, ml: dict | None = None) -> str:
    """The page.  target: a column for the machine-learning utility section (ml: its
    evaluate.ml_utility result, when already computed)."""
    if target is not None and ml is None:
        ml = ml_utility(real, syn, schema, target)
    r, s = encode(real, schema), encode(syn, schema)
    dom, names = schema.domain, [c.name for c in schema.synth_columns]
    parts = [NOTICE, "<h1>gpu_dpsyn evaluation</h1>",
             f"<p>real: {len(real):,} rows, synthetic: {len(syn):,} rows, {len(names)} columns</p>"]
    tv = {k: per_marginal_tvd(r, s, dom, names, k) for k in (1, 2) if k <= len(dom)}
    summary = [(f"mean {k}-way TVD", f"{np.mean([v for _, v in rows]):.4f}")
               for k, rows in tv.items()]
    if len(dom) >= 3:
        summary.append(("mean 3-way TVD", f"{tvd_codes(r, s, dom, 3, 1000).mean():.4f}"))
    summary.append(("NIST density score (300 random 3-way, max 1e6)",
                    f"{density_score(r, s, dom):,.0f}"))
    summary.append(("range queries: mean |ln(p_real / p_syn)| (300 random)",
                    f"{range_query_score(r, s, dom):.4f}"))
    parts += ["<h2>Summary</h2>", _table(summary, ["metric", "value"])]
    if ml is not None:
        parts += _ml_section(ml)
    parts += ["<h2>1-way marginals</h2>", _table([(", ".join(c), f"{v:.4f}") for c, v in tv[1]],
                                                 ["column", "TVD"])]
    if 2 in tv:
        parts += [f"<h2>2-way marginals (worst {top} of {len(tv[2])})</h2>",
                  _table([(", ".join(c), f"{v:.4f}") for c, v in tv[2][:top]],
                         ["columns", "TVD"])]
    parts += ["<h2>1-way histograms, real vs synthetic</h2>", _histograms(r, s, schema)]
    if run:
        if run.get("gum_history"):
            parts += ["<h2>GUM convergence</h2>", _convergence(run["gum_history"])]
        parts += ["<h2>Privacy ledger</h2>",
                  f"<p>{html.escape(str(run.get('guarantee', '')))}; method "
                  f"{html.escape(str(run.get('method', '')))}; mechanism "
                  f"{html.escape(str(run.get('mechanism', '')))}</p>",
                  _table([(m["label"], ", ".join(m["columns"]), m["cells"], f"{m['fraction']:.4g}",
                           "" if m["rho"] is None else f"{m['rho']:.4g}",
                           "" if m["epsilon"] is None else f"{m['epsilon']:.4g}",
                           f"{m['sigma']:.4g}") for m in run.get("measurements", [])],
                         ["what", "columns", "cells", "budget share", "rho", "epsilon",
                          "noise std"])]
        if run.get("private_bins"):  # DP outputs of the "quantiles" measurements
            parts += ["<h3>Private quantile bins (edges chosen by the run)</h3>",
                      _table([(c, ", ".join(f"{e:g}" for e in edges))
                              for c, edges in run["private_bins"].items()],
                             ["column", "edges"])]
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
             "padding:2px 8px;font-size:13px}img{max-width:100%}"
             ".notice{background:#fdd;border:3px solid #c00;padding:1em;font-size:1.2em}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>gpu_dpsyn report</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")
