"""A small table with every kind of column the report draws, synthesized once per session:
a 30-value categorical with long names, a nullable integer column in uneven bins, clock
times, dates by month, a float column in 100 bins."""
import functools

import numpy as np
import pandas as pd

CITIES = [f"City number {i} with a rather long official name" for i in range(30)]
SCHEMA = {"columns": {
    "city": {"type": "categorical", "values": CITIES},
    "kind": {"type": "categorical", "values": ["a", "b", "c"]},
    "delay": {"type": "numeric", "integer": True, "nullable": True,
              "edges": [-60, -15, 0, 15, 60, 301]},
    "clock": {"type": "numeric", "integer": True, "min": 0, "max": 2359, "support": "hhmm"},
    "when": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31", "unit": "month"},
    "score": {"type": "numeric", "min": 0, "max": 1, "bins": 100}}}


def real_table(n=1500, seed=0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    w = 1 / np.arange(1, 31)
    city = r.choice(30, n, p=w / w.sum())
    delay = pd.array(np.clip(np.round(r.normal(5, 30, n)), -60, 300).astype(int), "Int64")
    delay[r.random(n) < 0.05] = pd.NA
    days = pd.to_datetime("2020-01-01") + pd.to_timedelta(r.integers(0, 366, n), unit="D")
    return pd.DataFrame({
        "city": np.array(CITIES)[city],
        "kind": np.array(["a", "b", "c"])[city % 3],  # determined by the city
        "delay": delay,
        "clock": r.integers(5, 23, n) * 100 + r.integers(0, 60, n),
        "when": days.strftime("%Y-%m-%d"),
        "score": np.round(r.beta(2, 5, n), 4)})


@functools.lru_cache(maxsize=None)
def _case(seed):
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.schema import load_schema
    real = real_table()
    syn = Synthesizer(2.0, 1e-9, iterations=5, seed=seed, progress=False)
    out = syn.fit(real, SCHEMA).sample()
    run = syn.privacy_report()
    run["gum_history"] = syn.last_run.history
    return real, out, load_schema(SCHEMA), run


def case(seed=0):
    """(real, synthetic, schema, ledger); copies, so a test may change them."""
    real, syn, schema, run = _case(seed)
    return real.copy(), syn.copy(), schema, dict(run)


@functools.lru_cache(maxsize=None)
def page() -> str:
    """The report of case(), built once (drawing takes seconds)."""
    from gpu_dpsyn.evaluation.report import build_report
    real, syn, schema, run = case()
    return build_report(real, syn, schema, run, meta={"real": "real.csv", "seconds": 1.25})
