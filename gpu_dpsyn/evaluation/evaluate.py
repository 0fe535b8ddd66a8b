"""Utility metrics: total variation distance over k-way marginals, and machine-learning
utility (train on synthetic, test on real) for a target column."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from gpu_dpsyn.core.checks import integer
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DPSynError
from gpu_dpsyn.data.schema import Schema, load_schema

ML_TEST_SHARE = 0.3  # of the real table, held out: both models are scored on it
ML_MIN_ROWS = 10  # real rows: enough for a split with rows on both sides
_HGB_MAX_CATEGORIES = 255  # HistGradientBoosting's limit for a categorical feature


# a k-way marginal with more cells than this (and than 2 per row) is counted over the cells
# that occur rather than in a dense array: three 65,536-value columns would need 2^48
_DENSE_CELLS = 1 << 20


def pick_sets(n_attrs: int, k: int, max_sets: int | None = None, seed: int = 0) -> list:
    """Every k-set of column indexes, or max_sets of them drawn at random (seeded): one rule
    for the terminal, the report and the NIST density score, so that they agree."""
    if max_sets is not None:  # 0 would average nothing into NaN
        integer("max_sets", max_sets, 1)
    sets = list(itertools.combinations(range(n_attrs), k))
    if max_sets is not None and len(sets) > max_sets:
        pick = np.random.default_rng(seed).choice(len(sets), max_sets, replace=False)
        sets = [sets[i] for i in sorted(pick)]
    return sets


def joint_counts(real: list, syn: list, attrs, domain) -> tuple:
    """(real counts, synthetic counts, cells) of one marginal: cells is None when the counts
    cover the whole domain in order, else the cell indexes (row-major) they belong to."""
    dims = [int(domain[a]) for a in attrs]
    nr = len(real[attrs[0]])
    cell = np.zeros(nr + len(syn[attrs[0]]), dtype=np.int64)
    for a, d in zip(attrs, dims):
        cell = cell * d + np.concatenate([real[a], syn[a]]).astype(np.int64)
    size = math.prod(dims)
    if size <= max(_DENSE_CELLS, 2 * len(cell)):
        return (np.bincount(cell[:nr], minlength=size), np.bincount(cell[nr:], minlength=size),
                None)
    cells, inv = np.unique(cell, return_inverse=True)
    return (np.bincount(inv[:nr], minlength=len(cells)),
            np.bincount(inv[nr:], minlength=len(cells)), cells)


def tvd_codes(real: list, syn: list, domain, k: int, max_sets: int | None = None,
              seed: int = 0) -> np.ndarray:
    """TVD of every (or max_sets random) k-way marginal between two coded tables."""
    sets = pick_sets(len(domain), k, max_sets, seed)
    nr, ns = len(real[0]), len(syn[0])
    out = []
    for s in sets:
        cr, cs, _ = joint_counts(real, syn, s, domain)
        out.append(0.5 * np.abs(cr / nr - cs / ns).sum())
    return np.array(out)


def mean_tvd(real: pd.DataFrame, syn: pd.DataFrame, schema: Schema, ways=(1, 2, 3),
             max_sets: int | None = None) -> dict:
    """Mean TVD per order k on the schema's coded domain (schema: a Schema, a dict or the
    path of a JSON file, as fit() takes it)."""
    schema = load_schema(schema)
    check_rows(real, syn)
    r, s = encode(real, schema), encode(syn, schema)
    dom = schema.domain
    return {k: float(tvd_codes(r, s, dom, k, max_sets).mean()) for k in ways if k <= len(dom)}


def check_rows(real, syn) -> None:
    """DPSynError for a table with no rows, named: every share would be 0/0."""
    for name, df in (("real", real), ("synthetic", syn)):
        if len(df) == 0:
            raise DPSynError(f"the {name} table has no rows: nothing to compare")


def density_score(real: list, syn: list, domain, n_sets: int = 300, seed: int = 0) -> float:
    """NIST 2018 'density' score: 1e6 * (1 - mean TVD) over random 3-way marginals."""
    if len(domain) < 3:
        return float("nan")
    return float(1e6 * (1.0 - tvd_codes(real, syn, domain, 3, n_sets, seed).mean()))


def range_query_score(real: list, syn: list, domain, n_queries: int = 300, seed: int = 0,
                      floor: float = 1e-6) -> float:
    """Mean |ln(p_real / p_syn)| over random queries on 3 attributes, each restricted to a
    random range of codes (p floored at 1e-6, as in NIST 2018).  Lower is better."""
    r = np.random.default_rng(seed)
    k = min(3, len(domain))
    out = []
    for _ in range(n_queries):
        attrs = r.choice(len(domain), k, replace=False)
        mr, ms = np.ones(len(real[0]), bool), np.ones(len(syn[0]), bool)
        for a in attrs:
            lo, hi = np.sort(r.integers(0, domain[a], 2))
            mr &= (real[a] >= lo) & (real[a] <= hi)
            ms &= (syn[a] >= lo) & (syn[a] <= hi)
        out.append(abs(np.log(max(mr.mean(), floor) / max(ms.mean(), floor))))
    return float(np.mean(out))


def per_marginal_tvd(real: list, syn: list, domain, names, k: int) -> list:
    """[(column names, TVD)] for every k-way marginal, worst first."""
    sets = list(itertools.combinations(range(len(domain)), k))
    vals = tvd_codes(real, syn, domain, k)
    return sorted(((tuple(names[a] for a in s), float(v)) for s, v in zip(sets, vals)),
                  key=lambda x: -x[1])


def ml_utility(real: pd.DataFrame, syn: pd.DataFrame, schema, target: str, seed: int = 0,
               test_share: float = ML_TEST_SHARE) -> dict:
    """Train on synthetic, test on real, against train on real, test on real.

    The real table is split at random (seed): a model trained on 70% of it and one trained
    on the whole synthetic table are both scored on the other 30%.  Models: scikit-learn's
    HistGradientBoostingClassifier for a categorical target (accuracy, macro F1) and
    HistGradientBoostingRegressor for a numeric one (R^2 on the values; rows where it is
    missing are left out).  Features are the other synthesized columns as their schema
    codes, so both tables are read alike (categorical ones as categories, bins in order).
    gap = real - synthetic for each metric.  Reads the real table: not for publication."""
    metrics, models = _sklearn()
    schema = load_schema(schema)
    names = [c.name for c in schema.synth_columns]
    col = check_ml_tables(real, syn, schema, target)
    t = names.index(target)
    r, s = encode(real, schema), encode(syn, schema)
    feats = [a for a in range(len(names)) if a != t]
    cat = [schema.synth_columns[a].kind == "categorical"
           and schema.synth_columns[a].size <= _HGB_MAX_CATEGORIES for a in feats]
    classify = col.kind == "categorical"

    def xy(df, codes):
        x = np.column_stack([codes[a] for a in feats]).astype(np.int64)
        if classify:
            return x, codes[t].astype(np.int64)
        y = pd.to_numeric(df[target]).to_numpy(dtype=np.float64, na_value=np.nan)
        return x[~np.isnan(y)], y[~np.isnan(y)]

    (xr, yr), (xs, ys) = xy(real, r), xy(syn, s)
    if len(yr) < ML_MIN_ROWS or len(ys) < 2:
        raise DPSynError(f"ml utility needs at least {ML_MIN_ROWS} real and 2 synthetic rows "
                         f"with a {target!r} value, got {len(yr)} and {len(ys)}")
    n_test = int(round(test_share * len(yr)))
    order = np.random.default_rng(seed).permutation(len(yr))
    test, train = order[:n_test], order[n_test:]
    out = {"target": target, "task": "classification" if classify else "regression",
           "test_rows": int(n_test), "train_rows": {"real": int(len(train)),
                                                    "synthetic": int(len(ys))}}
    for who, (x, y) in (("real", (xr[train], yr[train])), ("synthetic", (xs, ys))):
        pred = _fit_predict(models, classify, x, y, xr[test], cat, seed)
        out[who] = ({"accuracy": float(metrics.accuracy_score(yr[test], pred)),
                     "macro_f1": float(metrics.f1_score(yr[test], pred, average="macro",
                                                        zero_division=0))}
                    if classify else {"r2": float(metrics.r2_score(yr[test], pred))})
    out["gap"] = {k: out["real"][k] - out["synthetic"][k] for k in out["real"]}
    if classify:  # what always answering the real training set's commonest class scores
        top = np.bincount(yr[train]).argmax()
        out["majority_accuracy"] = float(np.mean(yr[test] == top))
    return out


def check_target(schema: Schema, target: str):
    """The target column, if ml_utility can use it (DPSynError otherwise)."""
    if target not in schema.names:
        raise DPSynError(f"target {target!r} is not a column of the schema; columns are "
                         f"{schema.names}")
    col = schema[target]
    if col.kind not in ("categorical", "numeric"):
        raise DPSynError(f"target {target!r} is {'an' if col.kind == 'id' else 'a'} "
                         f"{col.kind} column; name a categorical "
                         "(classification) or numeric (regression) one")
    if len(schema.synth_columns) < 2:
        raise DPSynError("ml utility needs a feature column besides the target")
    return col


def check_ml_tables(real: pd.DataFrame, syn: pd.DataFrame, schema: Schema, target: str):
    """The target column, if ml_utility can use it on these tables: a usable target
    (check_target) with at least ML_MIN_ROWS real and 2 synthetic rows holding a value
    (DPSynError otherwise).  Cheap: callable before anything is computed."""
    col = check_target(schema, target)
    for df, what in ((real, "real"), (syn, "synthetic")):
        if target not in df.columns:
            raise DPSynError(f"target {target!r} is not a column of the {what} table")

    def rows(df) -> int:
        if col.kind == "categorical":  # a missing value is a class of its own
            return len(df)
        return int(pd.to_numeric(df[target], errors="coerce").notna().sum())
    nr, ns = rows(real), rows(syn)
    if nr < ML_MIN_ROWS or ns < 2:
        raise DPSynError(f"ml utility needs at least {ML_MIN_ROWS} real and 2 synthetic rows "
                         f"with a {target!r} value, got {nr} and {ns}")
    return col


def ml_rows(res: dict) -> list:
    """ml_utility's result as (metric, train on real, train on synthetic, gap) rows."""
    names = {"accuracy": "accuracy", "macro_f1": "macro F1", "r2": "R^2"}
    return [(names[k], f"{res['real'][k]:.4f}", f"{res['synthetic'][k]:.4f}",
             f"{res['gap'][k]:+.4f}") for k in res["real"]]


def _fit_predict(models, classify: bool, x, y, x_test, cat, seed):
    """A gradient-boosting model's predictions; a one-class training set predicts it."""
    if classify and len(np.unique(y)) < 2:
        return np.full(len(x_test), y[0])
    model = (models.HistGradientBoostingClassifier if classify
             else models.HistGradientBoostingRegressor)
    mask = np.asarray(cat) if any(cat) else None
    return model(categorical_features=mask, random_state=seed).fit(x, y).predict(x_test)


def check_sklearn() -> None:
    """DPSynError unless scikit-learn is installed (before any work is done)."""
    _sklearn()


def _sklearn():
    try:
        from sklearn import ensemble, metrics
    except ImportError:
        raise DPSynError("machine-learning utility needs scikit-learn: "
                         "pip install 'gpu_dpsyn[ml]'") from None
    return metrics, ensemble
