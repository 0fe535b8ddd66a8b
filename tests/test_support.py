"""Integer support: the exact values an integer column can take (finding 2)."""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.generate.decode import decode
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DataError, SchemaError
from gpu_dpsyn.data.schema import load_schema

HOURLY = list(range(0, 2400, 100)) + [2401]


def _schema(**spec):
    return load_schema({"columns": {"t": {"type": "numeric", "integer": True, **spec}}})


def _draw(schema, codes, seed=0, mode="uniform"):
    return decode([np.asarray(codes, np.uint16)], schema, seed=seed, numeric_decode=mode)["t"]


@pytest.mark.parametrize("mode", ["uniform", "midpoint"])
def test_hhmm_decodes_to_clock_values_only(mode):
    s = _schema(edges=HOURLY, support="hhmm")
    codes = np.repeat(np.arange(24), 500)
    t = _draw(s, codes, mode=mode).to_numpy()
    assert (t % 100 < 60).all() and (np.minimum(t // 100, 23) == codes).all()  # 2400: bin 23
    if mode == "uniform":  # every minute of an hour is reachable, 2400 too
        assert all(len(np.unique(t[codes == h])) == (61 if h == 23 else 60) for h in range(24))
    assert np.array_equal(encode(pd.DataFrame({"t": t}), s)[0], codes)


def test_hhmm_encoding_refuses_impossible_clock_values(backend):
    s = _schema(edges=HOURLY, support="hhmm")
    df = pd.DataFrame({"t": [0, 59, 2359, 2400, 1075]})
    with pytest.raises(DataError, match=r"'t'.*1 value.*outside its support 'hhmm'.*1075"):
        encode(df, s, backend.xp)
    assert encode(df.iloc[:4], s, backend.xp)[0] is not None


def test_list_support():
    s = _schema(min=0, max=60, bins=2, support=[1, 5, 10, 50, 60])
    t = _draw(s, np.repeat([0, 1], 300), seed=4).to_numpy()
    assert set(t) == {1, 5, 10, 50, 60}  # bins [0, 31) and [31, 61)
    with pytest.raises(DataError, match="outside its support"):
        encode(pd.DataFrame({"t": [7]}), s)


def test_step_support_and_default_bins():
    s = _schema(min=0, max=1000, support={"step": 25})
    assert s["t"].bins == 32
    t = _draw(s, np.repeat(np.arange(32), 50), seed=2).to_numpy()
    assert (t % 25 == 0).all() and t.min() >= 0 and t.max() <= 1000
    shifted = _schema(min=0, max=100, support={"step": 10, "start": 3})
    u = _draw(shifted, np.repeat(np.arange(shifted["t"].bins), 20)).to_numpy()
    assert (u % 10 == 3).all()
    with pytest.raises(DataError, match="outside its support"):
        encode(pd.DataFrame({"t": [10]}), shifted)


def test_few_support_values_get_one_bin_each_by_default():
    s = _schema(min=0, max=100, support=[0, 3, 50, 99])
    assert s["t"].bins == 4
    assert _draw(s, [0, 1, 2, 3]).tolist() == [0, 3, 50, 99]


def test_support_round_trips_through_the_schema_dict():
    for sup in ("hhmm", [1, 5, 9], {"step": 4, "start": 1}):
        s = _schema(min=0, max=2359, support=sup)
        again = load_schema(s.to_dict())
        assert again.to_dict() == s.to_dict() and again["t"].bins == s["t"].bins


@pytest.mark.parametrize("spec,match", [
    ({"min": 0, "max": 9, "support": "hhmm", "integer": False}, "integer"),
    ({"min": 0, "max": 9, "support": "roman"}, "unknown support"),
    ({"min": 0, "max": 9, "support": {"step": 0}}, "step"),
    ({"min": 0, "max": 9, "support": {"step": 2.5}}, "step"),
    ({"min": 0, "max": 9, "support": {"every": 2}}, "step"),
    ({"min": 0, "max": 9, "support": []}, "support"),
    ({"min": 0, "max": 9, "support": [1, 1]}, "duplicates"),
    ({"min": 0, "max": 9, "support": [1, 2.5]}, "integers"),
    ({"min": 0, "max": 9, "support": [1, 20]}, r"20.*outside"),
    ({"edges": [0, 60, 100], "support": "hhmm"}, r"bin \[60, 100\) holds no value"),
])
def test_bad_support_is_a_schema_error(spec, match):
    with pytest.raises(SchemaError, match=r"'t'.*" + match):
        _schema(**spec)


@pytest.mark.parametrize("support", [{"step": 10 ** 20}, {"step": 2 ** 63},
                                     {"step": 5, "start": 10 ** 20},
                                     {"step": 5, "start": -2 ** 70}, [1, 10 ** 20]])
def test_support_past_the_exact_integers_is_a_schema_error(support):
    # they overflowed int64 in NumPy: an OverflowError's traceback, not a one-line refusal
    with pytest.raises(SchemaError, match=r"'t'.*2\*\*53"):
        _schema(min=0, max=10, support=support)


def test_decode_with_support_on_the_backend_equals_numpy(backend):
    from gpu_dpsyn.core import rng
    s = _schema(edges=HOURLY, support="hhmm", nullable=True)
    codes = [np.arange(25).repeat(40).astype(np.uint8)]  # 24: the null code
    key = rng.split_key(5)
    host = decode(codes, s, seed=5)
    dev = decode(codes, s, seed=5, uniforms=lambda j, n: backend.to_numpy(
        backend.uniforms(key, n, j, rng.DECODE, 0)))
    pd.testing.assert_frame_equal(host, dev)
    assert host["t"].isna().sum() == 40 and (host["t"].dropna() % 100 < 60).all()


def test_values_read_from_a_table_over_the_range_equal_the_search():
    # core.lookup: bins and support checks of whole numbers gathered from a table over
    # the range (when it is no longer than the column) against the search a value; edges
    # given twice, supports of lists and steps, ranges not starting at 0, fractional ends
    from gpu_dpsyn.core import lookup
    from gpu_dpsyn.data.encoding import bin_codes
    from gpu_dpsyn.data.types import support
    r = np.random.default_rng(5)
    sups = [support.parse_support("c", [-7, -3, 0, 2, 3, 11, 40], -9, 45),
            support.parse_support("c", {"step": 3}, -9, 45),
            support.parse_support("c", "hhmm", 0, 2400)]
    for case in range(30):
        lo, hi = int(r.integers(-60, 5)), int(r.integers(10, 3000))
        x = r.integers(lo, hi + 1, int(r.integers(1, 20000))).astype(np.float64)
        edges = np.unique(r.integers(lo, hi + 1, int(r.integers(2, 12)))).astype(np.float64)
        edges = np.sort(np.concatenate([[lo], edges, edges[:case % 3], [hi]]))
        want = bin_codes(np, edges, x)
        ends = (lo - 0.5, hi + 0.5) if case % 2 else (lo, hi)
        got = lookup.on_range(np, lambda v: bin_codes(np, edges, v), x, *ends)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        for sup in sups:
            xi = np.clip(x, -9, 45).astype(np.int64) if sup is not sups[2] else \
                r.integers(0, 2401, len(x))
            span = (-9, 45) if sup is not sups[2] else (0, 2400)
            want = support.outside(sup, np, xi)
            got = lookup.on_range(np, lambda v: support.outside(sup, np, v), xi, *span)
            assert np.array_equal(got, want)


def test_encoding_through_the_table_equals_encoding_by_search(monkeypatch, flights,
                                                              flights_schema):
    # the demo table encoded with tables over the ranges and with none (TABLE_MAX 0):
    # the same codes, column by column
    from gpu_dpsyn.core import lookup
    schema = load_schema(flights_schema)
    got = encode(flights, schema)
    monkeypatch.setattr(lookup, "TABLE_MAX", 0)
    for a, b in zip(got, encode(flights, schema)):
        assert a.dtype == b.dtype and np.array_equal(a, b)
