"""Parquet's decimals and text kept through a release: a decimal128(10, 2) money column
came back as double and a `string` column as `large_string` (pandas 3's str dtype
writes that)."""
import json
import warnings
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.ingest import write_table
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import SchemaError
from gpu_dpsyn.generate.decode import decode


def _table(n: int = 2000) -> pa.Table:
    rng = np.random.default_rng(0)
    amount = [Decimal(f"{x:.2f}") for x in rng.gamma(2, 50, n)]
    return pa.table({
        "amount": pa.array(amount, pa.decimal128(10, 2)),
        "city": pa.array(rng.choice(["a", "b", "c"], n).tolist(), pa.string()),
        "lcity": pa.array(rng.choice(["x", "y"], n).tolist(), pa.large_string()),
        "dcity": pa.array(rng.choice(["p", "q"], n).tolist(), pa.string()).dictionary_encode(),
        "big": pa.array([Decimal(int(v)) for v in rng.integers(0, 10 ** 6, n)],
                        pa.decimal256(40, 0)),
    })


def test_a_parquet_release_keeps_decimals_and_text(tmp_path):
    data, schema, out = tmp_path / "in.parquet", tmp_path / "s.json", tmp_path / "o.parquet"
    pq.write_table(_table(), data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    cols = json.loads(schema.read_text())["columns"]
    assert cols["amount"]["type"] == "numeric"
    assert cols["amount"]["dtype"] == "decimal128(10, 2)"
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(out), "--seed", "0", "--quiet"]) == 0
    a, b = pq.read_schema(data), pq.read_schema(out)
    for name in a.names:  # a dictionary's int32 indices too (pandas' would be int8)
        assert b.field(name).type == a.field(name).type, name
    amounts = pq.read_table(out).column("amount").to_pylist()
    assert all(v.as_tuple().exponent == -2 for v in amounts)


def test_csv_text_is_unchanged_by_the_parquet_narrowing(tmp_path):
    df = pd.DataFrame({"s": ["a", "b"], "c": pd.Categorical(["a", "b"])})
    write_table(df, tmp_path / "o.csv")
    assert (tmp_path / "o.csv").read_text() == df.to_csv(index=False)
    write_table(df, tmp_path / "o.parquet")
    got = pq.read_schema(tmp_path / "o.parquet")
    assert got.field("s").type == pa.string()
    assert got.field("c").type.value_type == pa.string()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "o.parquet"), df)


def _money(dtype: str, lo=0, hi=1000, **extra) -> dict:
    return {"columns": {"m": {"type": "numeric", "min": lo, "max": hi, "bins": 8,
                              "dtype": dtype, **extra},
                        "k": {"type": "categorical", "values": ["a", "b"]}}}


@pytest.mark.parametrize("dtype,lo,hi", [
    ("decimal128(5, 2)", 0, 1000),          # 1000.00 needs 6 digits
    ("decimal128(4, 2)", 0, 99.996),        # rounds up to 100.00
    ("decimal128(4, 2)", -99.996, 0),
    ("decimal256(3, 0)", 0, 999.5),         # 999.5 rounds (half-even) to 1000
])
def test_a_decimal_too_narrow_for_the_range_is_refused(dtype, lo, hi):
    with pytest.raises(SchemaError, match=r"'m'.*decimal.*cannot hold") as e:
        load_schema(_money(dtype, lo, hi))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("dtype,match", [
    ("decimal128(39, 2)", "precision"), ("decimal256(77, 2)", "precision"),
    ("decimal128(0, 0)", "precision"), ("decimal128(5, 6)", "scale"),
    ("decimal128(5, -1)", "scale"), ("decimal(5, 2)", "not a pandas dtype"),
])
def test_bad_decimal_names_are_refused(dtype, match):
    with pytest.raises(SchemaError, match=match) as e:
        load_schema(_money(dtype, 0, 1))
    assert "\n" not in str(e.value)


def test_a_decimal_dtype_fits_numbers_only():
    """Listed numbers take one too (a Parquet decimal's few values), each within its scale;
    text does not."""
    load_schema({"columns": {"k": {"type": "categorical", "values": [1.5, 2.25, 7],
                                   "dtype": "decimal128(10, 2)"}}})
    with pytest.raises(SchemaError, match=r"'k'.*does not fit"):
        load_schema({"columns": {"k": {"type": "categorical", "values": ["a", "b"],
                                       "dtype": "decimal128(10, 2)"}}})
    with pytest.raises(SchemaError, match=r"'k'.*2 decimal places.*0\.125"):
        load_schema({"columns": {"k": {"type": "categorical", "values": [0.12, 0.125],
                                       "dtype": "decimal128(10, 2)"}}})
    with pytest.raises(SchemaError, match=r"'k'.*cannot hold"):
        load_schema({"columns": {"k": {"type": "categorical", "values": [1, 1000],
                                       "dtype": "decimal128(4, 2)"}}})


def test_a_decimal_that_just_fits_loads():
    for dtype in ("decimal128(4, 2)", "decimal128(4, 2)[pyarrow]", "decimal128( 4 ,2 )"):
        load_schema(_money(dtype, -99.99, 99.994))


def _fit(schema, n=3000, nullable=False):
    rng = np.random.default_rng(1)
    m = rng.uniform(0, 999, n)
    if nullable:
        m[rng.random(n) < 0.2] = np.nan
    df = pd.DataFrame({"m": m, "k": rng.choice(["a", "b"], n)})
    return Synthesizer(1.0, 1e-9, seed=4, progress=False, backend="cpu").fit(df, schema)


@pytest.mark.parametrize("decimals", [None, 4])
def test_decoded_decimals_are_the_floats_rounded_at_the_scale(decimals):
    """The same codes and seed decoded with and without the dtype draw the same floats;
    the decimals are each of them rounded half-even at the scale, within the range."""
    extra = {} if decimals is None else {"decimals": decimals}
    rng = np.random.default_rng(5)
    codes = [rng.integers(0, 8, 3000), rng.integers(0, 2, 3000)]
    floats = decode(codes, load_schema(_money("float64", 0, 999.99, **extra)), seed=4)["m"]
    dec = decode(codes, load_schema(_money("decimal128(6, 2)", 0, 999.99, **extra)),
                 seed=4)["m"]
    assert str(dec.dtype) == "decimal128(6, 2)[pyarrow]"
    q = Decimal("0.01")
    want = [Decimal(float(f)).quantize(q, ROUND_HALF_EVEN) for f in floats]
    assert dec.tolist() == want
    assert min(want) >= 0 and max(want) <= Decimal("999.99")
    assert len(set(want)) > 1000


def test_nullable_decimals_keep_their_nulls(tmp_path):
    out = _fit(_money("decimal128(6, 2)", 0, 999.99, nullable=True), nullable=True).sample(
        2000)
    assert out["m"].isna().any() and out["m"].notna().any()
    write_table(out, tmp_path / "o.parquet")
    assert pq.read_schema(tmp_path / "o.parquet").field("m").type == pa.decimal128(6, 2)
    write_table(out, tmp_path / "o.csv")  # written as the decimals' text
    text = (tmp_path / "o.csv").read_text().splitlines()[1:]
    assert all(t.split(",")[0] == "" or len(t.split(",")[0].split(".")[1]) == 2
               for t in text)


def test_decimals_in_a_csv_take_the_dialects_decimal_mark(tmp_path):
    from gpu_dpsyn.data.dialect import dialect_from_spec
    df = pd.DataFrame({"m": pd.array([Decimal("1.50"), None, Decimal("-0.01")],
                                     dtype=pd.ArrowDtype(pa.decimal128(6, 2))),
                       "k": ["a", "b", "c"]})
    write_table(df, tmp_path / "o.csv", dialect=dialect_from_spec(
        {"separator": ";", "decimal": ","}))
    assert (tmp_path / "o.csv").read_text().splitlines() == ["m;k", "1,50;a", ";b",
                                                             "-0,01;c"]


def test_few_decimals_of_a_wide_scale_come_back_as_those_decimals(tmp_path):
    """decimal128(38, 18): a rate of five values was drafted as floats and written back as
    double, an amount of two places as 98.326999999999998181 (the float's binary value at
    18 places): each comes back in its own type, the rate's values among the real ones and
    the amounts to the places they are written with."""
    rng = np.random.default_rng(0)
    rates = [Decimal(v) for v in ("0.1", "0.25", "1.5", "2.75", "10.05")]
    data, schema, out = tmp_path / "in.parquet", tmp_path / "s.json", tmp_path / "o.parquet"
    wide = pa.decimal128(38, 18)
    pq.write_table(pa.table({
        "rate": pa.array([rates[i] for i in rng.integers(0, 5, 3000)], wide),
        "amount": pa.array([Decimal(f"{x:.2f}") for x in rng.normal(100, 20, 3000)], wide),
        "k": pa.array(rng.choice(["a", "b"], 3000).tolist())}), data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    cols = json.loads(schema.read_text())["columns"]
    assert cols["rate"]["values"] == [0.1, 0.25, 1.5, 2.75, 10.05]
    assert cols["amount"]["decimals"] == 2
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(out), "--seed", "0", "--quiet"]) == 0
    got = pq.read_table(out)
    assert got.schema.field("rate").type == wide and got.schema.field("amount").type == wide
    assert set(got.column("rate").to_pylist()) <= set(rates)
    amounts = got.column("amount").to_pylist()
    assert all(v == v.quantize(Decimal("0.01")) for v in amounts), amounts[:5]
    assert len(set(amounts)) > 100
