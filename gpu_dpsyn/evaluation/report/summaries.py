"""Tables of the report: numeric summaries (mean, quantiles) and the ML-utility result."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd

from gpu_dpsyn.evaluation.evaluate import ml_rows
from gpu_dpsyn.data.types.datetime import to_epoch
from gpu_dpsyn.evaluation.report.html import table
from gpu_dpsyn.evaluation.report.labels import datetime_texts, number
from gpu_dpsyn.evaluation.report.verdict import ml_sentence

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _clock(col) -> bool:
    return col.support is not None and col.support.spec == "hhmm"


def _values(s: pd.Series, col) -> np.ndarray:
    """A numeric or datetime column as float64, NaN where missing: datetimes in ns, clock
    times (HHMM) in minutes after midnight, so that means and spreads are times too."""
    if col.kind == "datetime":
        x, na = to_epoch(s, col)
        return np.where(na, np.nan, x.astype(np.float64))
    x = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return x // 100 * 60 + x % 100 if _clock(col) else x


def _stats(x: np.ndarray) -> tuple:
    v = x[~np.isnan(x)]
    if len(v) == 0:
        return (np.nan,) * (2 + len(QUANTILES)), 1.0
    # quantiles that are values of the column (no halfway dates between two days)
    return (v.mean(), v.std(), *np.quantile(v, QUANTILES, method="inverted_cdf")), \
        1 - len(v) / len(x)


def numeric_summary(real: pd.DataFrame, syn: pd.DataFrame, schema) -> str:
    """Mean, standard deviation and quantiles of each numeric and datetime column in both
    tables, and how far the synthetic mean moved in units of the real standard deviation."""
    rows = []
    for col in schema.synth_columns:
        if col.kind not in ("numeric", "datetime"):
            continue
        (r, r_na), (s, s_na) = (_stats(_values(df[col.name], col)) for df in (real, syn))
        shift = (s[0] - r[0]) / r[1] if r[1] > 0 else np.nan
        shift = "" if np.isnan(shift) else "0.00 sd" if abs(shift) < 0.005 else f"{shift:+.2f} sd"
        rt, st = _texts(col, r, s)
        rows += [(col.name, "real", *rt, f"{r_na:.1%}", ""),
                 ("", "synthetic", *st, f"{s_na:.1%}", shift)]
    if not rows:
        return ""
    header = ["column", "table", "mean", "sd", *(f"{q:.0%}" for q in QUANTILES), "missing",
              "mean shift"]
    header[4 + QUANTILES.index(0.5)] = "median"
    return ("<h2>Numeric and date columns: mean and quantiles</h2><p>Synthetic values are "
            "drawn inside their bin (by a density following the neighbouring bins', or "
            "by the private bins' noisy shape), so "
            "differences smaller than a bin are expected. <em>Mean shift</em>: synthetic mean "
            "minus real mean, in real standard deviations.</p>" + table(rows, header))


def _texts(col, *stats) -> list:
    """Each row of statistics (mean, sd, quantiles) as text in the column's own terms."""
    if col.kind == "datetime":
        ns = [np.nan_to_num(np.array(st)).round().astype(np.int64) for st in stats]
        # one format for both rows' quantiles (values of the column); a mean falls anywhere
        q = datetime_texts(col, np.concatenate([x[2:] for x in ns]))
        n = len(QUANTILES)
        return [["", "", *[""] * n] if np.isnan(st[0]) else
                [datetime_texts(col, x[:1], "%Y-%m-%d %H:%M")[0], _duration(st[1]),
                 *q[i * n:(i + 1) * n]] for i, (st, x) in enumerate(zip(stats, ns))]
    if _clock(col):
        return [["" if np.isnan(v) else f"{v / 60:.3g} h" if i == 1 else
                 "{:02d}:{:02d}".format(*divmod(int(round(v)), 60)) for i, v in enumerate(st)]
                for st in stats]
    return [["" if np.isnan(v) else number(round(float(v), 10)) for v in st] for st in stats]


def _duration(ns: float) -> str:
    days = ns / 86_400e9
    return f"{days:.3g} days" if days >= 1 else f"{ns / 3_600e9:.3g} hours"


def ml_section(res: dict) -> list:
    kind = ("HistGradientBoostingClassifier" if res["task"] == "classification"
            else "HistGradientBoostingRegressor")
    rows = ml_rows(res)
    if "majority_accuracy" in res:
        rows.append(("accuracy of always the commonest class", f"{res['majority_accuracy']:.4f}",
                     "", ""))
    return [f"<h2>Machine-learning utility: predicting {html.escape(res['target'])}</h2>",
            f"<p>{ml_sentence(res)} Models: scikit-learn's {kind}, trained once on "
            f"{res['train_rows']['real']:,} real rows and once on the "
            f"{res['train_rows']['synthetic']:,} synthetic rows, both tested on the "
            f"{res['test_rows']:,} real rows held out from the first; gap = real − synthetic "
            "(near 0 is best; a large gap means the synthetic table lost what predicts "
            f"{html.escape(res['target'])}).</p>",
            table(rows, ["metric", "train on real", "train on synthetic", "gap"])]
