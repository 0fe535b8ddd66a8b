"""Output dtypes come from the public schema, never from the private table."""
import io

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import SchemaError
from gpu_dpsyn.data.schema import load_schema

SCHEMA = {"columns": {
    "code": {"type": "categorical", "values": [1, 2, "x"]},
    "n": {"type": "numeric", "integer": True, "min": 0, "max": 9, "nullable": True},
    "f": {"type": "numeric", "min": 0, "max": 10, "bins": 5},
    "b": {"type": "categorical", "values": [True, False], "nullable": True}}}


def _csv(extra: bool) -> str:
    rows = [f"{1 + i % 2},{i % 10},{i % 7}.25,{'True' if i % 3 else 'False'}"
            for i in range(300)]
    if extra:  # the neighbour: one more record, text in the numeric-looking column, NaNs
        rows.append("x,,1.5,")
    return "code,n,f,b\n" + "\n".join(rows) + "\n"


def _sample(df, schema=SCHEMA, n=200):
    syn = Synthesizer(1.0, 1e-6, seed=3, iterations=2, progress=False, backend="cpu",
                      method="dpsyn")
    return syn.fit(df, schema).sample(n)


@pytest.mark.parametrize("backend_kw", [{}, {"dtype_backend": "numpy_nullable"}])
def test_neighbouring_tables_give_the_same_output_dtypes(backend_kw):
    a, b = (pd.read_csv(io.StringIO(_csv(e)), **backend_kw) for e in (False, True))
    assert str(a["code"].dtype) != str(b["code"].dtype)  # pandas told them apart
    outs = [_sample(t) for t in (a, b)]
    assert [str(t) for t in outs[0].dtypes] == [str(t) for t in outs[1].dtypes]
    got = dict(outs[0].dtypes)
    assert got["code"] == np.dtype(object) and str(got["n"]) == "Int64"
    assert got["f"] == np.float64 and str(got["b"]) == "boolean"


def test_narrow_input_dtypes_decode_in_the_schema_range():
    # values the schema allows but float16 / int8 cannot hold must come out intact
    schema = {"columns": {"h": {"type": "numeric", "min": 0, "max": 1e6, "bins": 1},
                          "k": {"type": "numeric", "integer": True, "min": 0, "max": 300,
                                "bins": 1}}}
    df = pd.DataFrame({"h": np.arange(400, dtype=np.float16),
                       "k": (np.arange(400) % 100).astype(np.int8)})
    out = _sample(df, schema, 500)
    assert out["h"].dtype == np.float64 and out["k"].dtype == np.int64
    assert np.isfinite(out["h"]).all() and out["h"].max() > 65504  # beyond float16
    assert out["k"].between(0, 300).all() and out["k"].max() > 127  # beyond int8


def test_schema_dtype_field_is_honoured():
    spec = {"columns": {
        "k": {"type": "numeric", "integer": True, "min": -5, "max": 300, "dtype": "int16"},
        "m": {"type": "numeric", "integer": True, "min": 0, "max": 9, "nullable": True,
              "dtype": "UInt8"},
        "f": {"type": "numeric", "min": 0, "max": 1, "dtype": "float32"},
        "c": {"type": "categorical", "values": ["a", "b", 3], "dtype": "category"},
        "s": {"type": "categorical", "values": [1, 2], "nullable": True, "dtype": "string"}}}
    df = pd.DataFrame({"k": np.arange(200) % 300, "m": [np.nan] + list(range(9)) * 22 + [1],
                       "f": np.linspace(0, 1, 200), "c": ["a", "b", 3, "a"] * 50,
                       "s": [1, None, 2, 2] * 50})
    out = _sample(df, spec)
    assert [str(t) for t in out.dtypes] == ["int16", "UInt8", "float32", "category", "string"]
    assert list(out["c"].cat.categories) == ["a", "b", 3]  # from the schema, not the sample
    assert set(out["s"].dropna()) <= {"1", "2"}
    schema = load_schema(spec)
    assert load_schema(schema.to_dict()).to_dict() == schema.to_dict()
    assert schema.to_dict()["columns"]["k"]["dtype"] == "int16"
    assert len(encode(out, schema)) == 5  # the output reads back under its own schema


@pytest.mark.parametrize("dtype", ["int16", "i2", "<i2", "Int16", "uint8", "u1"])
def test_an_integer_dtype_by_any_name_makes_the_column_integer(dtype):
    # "int16" made it integer while "i2" was refused as not of kind float
    s = load_schema({"columns": {"x": {"type": "numeric", "min": 0, "max": 9, "bins": 3,
                                       "dtype": dtype}}})
    assert s["x"].integer


@pytest.mark.parametrize("spec,match", [
    ({"type": "numeric", "integer": True, "min": 0, "max": 300, "dtype": "int8"},
     r"'x'.*'int8' cannot hold .*\[0, 300\]"),
    ({"type": "numeric", "integer": True, "min": -1, "max": 3, "dtype": "uint16"},
     r"'x'.*'uint16' cannot hold"),
    ({"type": "numeric", "integer": True, "min": 0, "max": 9, "nullable": True,
      "dtype": "int64"}, r"'x'.*nullable.*'int64' cannot hold missing values"),
    ({"type": "numeric", "min": 0, "max": 1e5, "dtype": "float16"}, r"'x'.*'float16' cannot hold"),
    ({"type": "numeric", "integer": True, "min": 0, "max": 2 ** 25, "dtype": "float32"},
     r"'x'.*'float32' cannot hold"),
    ({"type": "numeric", "integer": False, "min": 0, "max": 9, "dtype": "int32"},
     r"'x'.*'int32' does not fit"),
    ({"type": "numeric", "min": 0, "max": 9, "dtype": "string"}, r"'x'.*'string' does not fit"),
    ({"type": "categorical", "values": ["a", "b"], "dtype": "bool"}, r"'x'.*'bool' does not fit"),
    ({"type": "categorical", "values": [1, 500], "dtype": "int8"}, r"'x'.*'int8' cannot hold"),
    ({"type": "categorical", "values": [True, False], "nullable": True, "dtype": "bool"},
     r"'x'.*cannot hold missing values"),
    ({"type": "numeric", "min": 0, "max": 9, "dtype": "nonsense"}, r"'x'.*not a pandas dtype"),
    ({"type": "numeric", "min": 0, "max": 9, "dtype": 5}, r"'x'.*not a pandas dtype"),
    ({"type": "numeric", "min": 0, "max": 9, "dtype": "datetime64[ns]"}, r"'x'.*does not fit"),
    ({"type": "id", "dtype": "int16"}, r"'x'.*'int16' cannot hold"),
    # accepted here, these failed after the budget was spent: a cast pandas refuses, or
    # a type Parquet cannot store
    *[({"type": "datetime", "min": "2013-01-01", "max": "2013-12-31", "unit": "day",
        "dtype": f"datetime64[{u}]"}, rf"'x'.*datetime64\[{u}\].*seconds") for u in "DhmY"],
    ({"type": "numeric", "min": 0, "max": 9, "dtype": ">f8"}, r"'x'.*byte order"),
    ({"type": "numeric", "integer": True, "min": 0, "max": 9, "dtype": ">i4"},
     r"'x'.*byte order"),
    ({"type": "numeric", "min": 0, "max": 9, "dtype": "longdouble"}, r"'x'.*float64"),
    ({"type": "categorical", "values": [1.5, 2], "dtype": "longdouble"}, r"'x'.*float64"),
    # (a decimal is parsed by dtypes now, but must hold the range: 9.00 needs 3 digits)
    ({"type": "numeric", "min": 0, "max": 9, "dtype": "decimal128(2, 2)[pyarrow]"},
     r"'x'.*'decimal128\(2, 2\)\[pyarrow\]' cannot hold"),
])
def test_bad_dtype_is_refused_at_load(spec, match):
    with pytest.raises(SchemaError, match=match):
        load_schema({"columns": {"x": spec, "y": {"type": "numeric", "min": 0, "max": 1}}})


@pytest.mark.parametrize("lo,hi", [(0, 2 ** 63), (0, 2 ** 64 - 1), (-(2 ** 63) - 5, 0),
                                   (2 ** 60, 2 ** 60 + 10), (0, 10 ** 300)])
def test_integer_range_float64_cannot_bin_is_refused_at_load(lo, hi):
    # binning and decoding run in float64: beyond 2**53 neighbouring integers merge
    with pytest.raises(SchemaError, match=r"'x'.*integer range") as e:
        load_schema({"columns": {"x": {"type": "numeric", "integer": True, "min": lo,
                                       "max": hi}}})
    assert len(str(e.value)) < 400  # a bound of 300 digits, capped


def test_float_range_too_wide_for_float64_is_refused_at_load():
    with pytest.raises(SchemaError, match=r"'x'.*too wide"):
        load_schema({"columns": {"x": {"type": "numeric", "min": -1e308, "max": 1e308}}})
