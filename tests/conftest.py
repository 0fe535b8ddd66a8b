import json
import functools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.backends import get_backend, gpu_available
from gpu_dpsyn.data.schema import load_schema

ROOT = Path(__file__).resolve().parents[1]
FLIGHTS = ROOT / "data" / "flights.csv.xz"
FLIGHTS_SCHEMA = ROOT / "data" / "flights_schema.json"

gpu = pytest.mark.skipif(not gpu_available(), reason="CuPy has no CUDA device here")
BACKENDS = ["cpu", pytest.param("gpu", marks=[pytest.mark.gpu, gpu])]


@functools.lru_cache(maxsize=None)
def _flights(nrows):
    return pd.read_csv(FLIGHTS, nrows=nrows)


@pytest.fixture
def flights():
    """The first 20,000 rows of the bundled real flights table (a fresh copy)."""
    return _flights(20000).copy()


@pytest.fixture
def flights_schema():
    return load_schema(FLIGHTS_SCHEMA)


@pytest.fixture(params=BACKENDS)
def backend(request):
    return get_backend(request.param)


def xor_table(n=20000, seed=0):
    """Columns a, b, c = a xor b and d: every pair is independent, the triple (a, b, c) is
    all dependence, so PrivSyn's pairs alone cannot show it and only the adaptive rounds
    can."""
    r = np.random.default_rng(seed)
    a, b = r.integers(0, 2, n), r.integers(0, 2, n)
    df = pd.DataFrame({"a": a, "b": b, "c": a ^ b, "d": r.integers(0, 3, n)})
    schema = {"columns": [{"name": k, "type": "categorical", "values": [0, 1]}
                          for k in "abc"] +
              [{"name": "d", "type": "categorical", "values": [0, 1, 2]}]}
    return df, schema


def small_table(n=500, seed=0):
    """A tiny mixed-type table with a known schema."""
    r = np.random.default_rng(seed)
    a = r.integers(0, 3, n)
    df = pd.DataFrame({
        "color": np.array(["red", "green", "blue"])[a],
        "size": (a * 3 + r.integers(0, 3, n)).astype(np.int64),
        "score": np.round(r.uniform(0, 10, n), 2),
    })
    schema = {"columns": {
        "color": {"type": "categorical", "values": ["red", "green", "blue"]},
        "size": {"type": "numeric", "integer": True, "min": 0, "max": 8},
        "score": {"type": "numeric", "min": 0, "max": 10, "bins": 5},
    }}
    return df, schema


def xyz_table(n=20000, values=8, seed=0):
    """x = y = z: every pair of columns is equal in every record."""
    x = np.random.default_rng(seed).integers(0, values, n)
    spec = {"type": "numeric", "integer": True, "min": 0, "max": values - 1}
    return pd.DataFrame({"x": x, "y": x, "z": x}), {"columns": {c: spec for c in "xyz"}}


def moves_case(r, max_contexts: int, min_size: int, max_size: int, max_cells: int):
    """A random best-moves case (X, g, ctx) for the polish: gains tied (whole and half g),
    values absent, rows with one value or none present, 1 to 4 targets."""
    U, size = int(r.integers(1, max_contexts)), int(r.integers(min_size, max_size))
    cells = [int(r.integers(1, max_cells)) for _ in range(int(r.integers(1, 5)))]
    g = [r.integers(-3, 4, (size, c)) * r.choice([1.0, 0.5], (size, c)) for c in cells]
    ctx = np.stack([r.integers(0, c, U) for c in cells], axis=1)
    X = r.integers(0, 3, (U, size)) * (r.random((U, size)) < 0.5)
    return X, g, ctx


@pytest.fixture
def no_raster(monkeypatch):
    """Report figures built but not drawn to PNG: for tests of the page's text (the PNGs take
    most of a report's seconds; report_case.page() and test_html_report draw them)."""
    plots = pytest.importorskip("gpu_dpsyn.evaluation.report.plots")
    monkeypatch.setattr(plots, "png",
                        lambda fig, alt: plots.plt().close(fig) or f'<img alt="{alt}">')


def fit_spied(monkeypatch, step: str, record, default, rows: int, **kw):
    """Fit (seed 4, epsilon 8) and sample `rows` records with generate.records.<step> wrapped:
    record(result, backend, cols, targets, sizes, key, call, progress) is called around
    each call: with None before it (what it returns is kept), then with (that, the
    call's result).  kw: Synthesizer settings, and table= (default: `default`) / public=
    (the first rows of the table as a public prior)."""
    import warnings


    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.privacy.keys import SeededNoiseWarning
    from gpu_dpsyn.generate import records
    real = getattr(records, step)

    def spy(*args):
        state = record(None, *args)
        out = real(*args)
        record((state, out), *args)
        return out
    monkeypatch.setattr(records, step, spy)
    df, schema = kw.pop("table", None) or default
    public = kw.pop("public", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        syn = Synthesizer(8.0, 1e-6, seed=4, backend="cpu", progress=False, **kw)
        syn.fit(df, schema, public=None if public is None else df.iloc[:public])
        out = syn.sample(rows)
    return syn, out


def cli_files(tmp_path, flights, flights_schema, cols, rows: int):
    """(folder, a real table's CSV of `rows` flights rows and `cols`, its schema JSON) for
    command-line tests."""
    real = tmp_path / "real.csv"
    flights[cols].iloc[:rows].to_csv(real, index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"columns": {c: flights_schema[c].to_dict() for c in cols}}))
    return tmp_path, real, schema


def no_reading(monkeypatch) -> None:
    """Fail the test if the command reads its input table (checks must come first)."""
    def fail(*a, **k):
        pytest.fail("the input was read before the check")
    monkeypatch.setattr("gpu_dpsyn.cli.commands.read_table", fail)
    monkeypatch.setattr("gpu_dpsyn.cli.drafting.read_table", fail)


def one_line_error(capsys, *parts) -> None:
    """The command printed exactly one error line, naming every part (its warnings, one
    line each, aside: a small table at eps 1 draws the noise warning)."""
    err = "".join(x for x in capsys.readouterr().err.splitlines(keepends=True)
                  if not x.startswith("gpu-dpsyn: warning: "))
    assert err.startswith("gpu-dpsyn: error: ") and err.count("\n") == 1, err
    assert all(p in err for p in parts), err


@pytest.fixture(scope="module")
def client():
    """A Dask client on an in-process cluster of two one-thread workers."""
    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        yield c


def drafted(df, **kw):
    """infer-schema's draft of df, its warnings muted: (schema, each column's line by
    the column's name)."""
    import warnings
    from gpu_dpsyn.data.inference import infer_schema_with_summary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, lines = infer_schema_with_summary(df, **kw)
    return s, {x.split()[0]: x for x in lines}
