import json
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import small_table
from gpu_dpsyn.generate.decode import decode
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DataError, SchemaError
from gpu_dpsyn.data.schema import load_schema


def test_load_our_schema_file(flights_schema):
    s = flights_schema
    assert s["carrier"].kind == "categorical" and s["carrier"].size == 16
    assert s["month"].size == 12 and s["month"].integer
    assert s["dep_delay"].nullable and s["dep_delay"].size == 17  # 16 bins + missing
    assert s["minute"].kind == "derived" and s["minute"].bins == 0  # not measured
    assert s["flight"].bins == 20 and s.domain[s.names.index("flight")] == 20


def test_nist_parameters_json(tmp_path):
    params = {"schema": {"SEX": {"dtype": "uint8", "values": [1, 2]},
                         "AGE": {"dtype": "uint8", "min": 0, "max": 90},
                         "INCOME": {"dtype": "float", "min": 0, "max": 1e5, "bins": 10}},
              "runs": [{"epsilon": 1, "delta": 1e-9, "max_records_per_individual": 7}]}
    p = tmp_path / "parameters.json"
    p.write_text(json.dumps(params))
    s = load_schema(p)
    assert s["SEX"].kind == "categorical" and s["SEX"].values == [1, 2]
    assert s["AGE"].kind == "numeric" and s["AGE"].integer and s["AGE"].bins == 32
    assert s["INCOME"].kind == "numeric" and not s["INCOME"].integer and s["INCOME"].bins == 10
    assert s.max_records_per_individual == 7


@pytest.mark.parametrize("doc, message", [
    # the unit of privacy given twice, differently: neither may be dropped silently
    ({"max_records_per_individual": 1, "schema": {"A": {"values": [1, 2]}},
      "runs": [{"max_records_per_individual": 5}]}, "max_records_per_individual 1 and 5"),
    ({"schema": {"A": {"values": [1, 2]}},
      "runs": [{"max_records_per_individual": 5}, {"max_records_per_individual": 7}]},
     "max_records_per_individual 5 and 7"),
    ({"max_rows": 10, "schema": {"A": {"values": [1, 2]}}, "runs": [{"max_records": 20}]},
     "max_records 10 and 20"),
    # a column named twice in a list, or typed twice
    ({"columns": [{"name": "a", "type": "categorical", "values": [1]},
                  {"name": "a", "type": "numeric", "min": 0, "max": 5}]}, "column 'a' twice"),
    ({"columns": {"a": {"type": "categorical", "kind": "numeric", "values": [1]}}},
     "'type' categorical and 'kind' 'numeric'"),
    ({"columns": {"a": {"type": "categorical", "kind": ["categorical"], "values": [1]}}},
     "'type' categorical and 'kind'"),  # not even a name: no TypeError either
    # runs beside "columns" are read as in a NIST file, not dropped
    ({"columns": {"A": {"type": "categorical", "values": [1, 2]}},
      "runs": [{"max_records_per_individual": 5}], "max_records_per_individual": 1},
     "max_records_per_individual 1 and 5"),
])
def test_a_schema_saying_one_thing_twice_differently_is_refused(doc, message):
    with pytest.raises(SchemaError, match=message):
        load_schema(doc)


def test_runs_beside_columns_give_the_bound():
    s = load_schema({"columns": {"A": {"type": "categorical", "values": [1, 2]}},
                     "runs": [{"max_records_per_individual": 5}]})
    assert s.max_records_per_individual == 5


@pytest.mark.parametrize("text", ['{"columns": {"a": {"type": "numeric", "min": 0, "max": 1'
                                  + "0" * 5000 + "}}}", b'{"columns": "\xe9"}'])
def test_a_schema_file_json_cannot_hold_is_one_line(tmp_path, text):
    p = tmp_path / "s.json"
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(SchemaError, match="s.json"):
        load_schema(p)


@pytest.mark.parametrize("digits", [400, 5000])  # 5000: past the digits repr() converts
def test_a_bound_of_hundreds_of_digits_is_refused_in_one_line(digits):
    with pytest.raises(SchemaError, match="'a'") as e:
        load_schema({"columns": {"a": {"type": "numeric", "min": 0, "max": 10 ** digits}}})
    assert len(str(e.value)) < 600


def test_nist_runs_that_agree_on_the_bounds_are_read():
    s = load_schema({"max_records_per_individual": 3, "schema": {"A": {"values": [1, 2]}},
                     "runs": [{"epsilon": 1, "max_records_per_individual": 3},
                              {"epsilon": 2, "max_records_per_individual": 3}]})
    assert s.max_records_per_individual == 3


def test_integer_bins_partition_the_range():
    s = load_schema({"columns": {"x": {"type": "numeric", "integer": True, "min": 0, "max": 9,
                                       "bins": 4}}})
    df = pd.DataFrame({"x": np.arange(10)})
    codes = encode(df, s)[0]
    # 10 integers into 4 bins of sizes 3,2,3,2 (ceil boundaries 0,3,5,8)
    assert codes.tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 3, 3]
    back = decode([codes], s, seed=3)["x"].to_numpy()
    edges = np.array([0, 3, 5, 8, 10])
    assert np.all((back >= edges[codes]) & (back < edges[codes + 1]))


def test_round_trip_exact_columns():
    df, schema = small_table()
    s = load_schema(schema)
    codes = encode(df, s)
    assert [c.dtype for c in codes] == [np.uint8] * 3
    out = decode(codes, s, seed=1)
    assert out["color"].tolist() == df["color"].tolist()
    assert out["size"].tolist() == df["size"].tolist() and out["size"].dtype == np.int64
    bins = np.floor(df["score"].to_numpy() / 2).clip(0, 4)
    assert np.array_equal(np.floor(out["score"].to_numpy() / 2).clip(0, 4), bins)


def test_nullable_round_trip(flights, flights_schema):
    codes = encode(flights, flights_schema)
    out = decode(codes, flights_schema, seed=0)
    assert out["dep_time"].isna().sum() == flights["dep_time"].isna().sum() > 0
    assert str(out["dep_time"].dtype) == "Int64" and out["month"].dtype == np.int64
    assert list(out.columns) == list(flights.columns)
    assert np.array_equal(encode(out, flights_schema)[8], codes[8])


def test_encode_on_the_backend_equals_numpy(backend, flights, flights_schema):
    # the binning runs on the backend's arrays (the GPU for CuPy): the same codes, dtypes
    host = encode(flights, flights_schema)
    dev = encode(flights, flights_schema, backend.xp)
    assert len(dev) == len(host)
    for h, d in zip(host, dev):
        assert d.dtype == h.dtype and np.array_equal(backend.to_numpy(d), h)
    assert sum(int((backend.to_numpy(d) == c.null_code).sum()) for d, c in
               zip(dev, flights_schema.synth_columns) if c.nullable) > 0


def test_missing_and_extra_columns(flights, flights_schema):
    with pytest.raises(DataError, match=r"missing from the data: \['dest'\]"):
        encode(flights.drop(columns=["dest"]), flights_schema)
    with pytest.raises(DataError, match=r"not in the schema: \['bogus'\]"):
        encode(flights.assign(bogus=1), flights_schema)


def test_names_that_differ_only_in_unicode_composition_are_told_apart():
    """'missing from the data: ['café']; not in the schema: ['café']': two names that look
    alike, one with é as one code point, one as e and an accent."""
    from gpu_dpsyn.data.schema import load_schema
    s = load_schema({"columns": {"caf\u00e9": {"type": "categorical", "values": ["a"]},
                                 "n": {"type": "categorical", "values": ["x"]}}})
    df = pd.DataFrame({"cafe\u0301": ["a"], "n": ["x"]})
    with pytest.raises(DataError, match=r"differ only in how their letters are composed "
                                        r".*'caf\\xe9' in the schema, 'cafe\\u0301' in"):
        encode(df, s)


def test_a_header_that_names_no_schema_column_is_not_repeated(tmp_path):
    # no header row (or a blank first line): pandas reads the first record as the
    # header, and the message showed its values
    from gpu_dpsyn.data.ingest import read_table
    from gpu_dpsyn.data.schema import load_schema
    p = tmp_path / "t.csv"
    p.write_text("secret-name,97\nbob,3\n")
    s = load_schema({"columns": {"who": {"type": "categorical", "values": ["bob"]},
                                 "n": {"type": "numeric", "min": 0, "max": 100}}})
    with pytest.raises(DataError) as e:
        encode(read_table(str(p), schema=s), s)
    assert "secret" not in str(e.value) and "97" not in str(e.value)
    assert "header" in str(e.value) and "'who'" in str(e.value)


def test_value_outside_schema(backend, flights, flights_schema):
    bad = flights.copy()
    bad.loc[3, "carrier"] = "ZZ"
    with pytest.raises(DataError, match="carrier.*outside the schema.*'ZZ'"):
        encode(bad, flights_schema, backend.xp)
    bad = flights.copy()
    bad.loc[5, "month"] = 13
    with pytest.raises(DataError, match=r"month.*outside the schema range \[1, 12\]"):
        encode(bad, flights_schema, backend.xp)


def test_nan_where_not_allowed(backend, flights, flights_schema):
    bad = flights.copy()
    bad["month"] = bad["month"].astype(float)
    bad.loc[[1, 2], "month"] = np.nan
    with pytest.raises(DataError, match="month.*2 missing values"):
        encode(bad, flights_schema, backend.xp)


def test_non_numeric_in_numeric_column(backend, flights, flights_schema):
    bad = flights.copy().astype({"day": object})
    bad.loc[0, "day"] = "Monday"
    with pytest.raises(DataError, match="day.*non-numeric.*'Monday'"):
        encode(bad, flights_schema, backend.xp)


def test_empty_table(flights, flights_schema):
    with pytest.raises(DataError, match="empty"):
        encode(flights.iloc[:0], flights_schema)


@pytest.mark.parametrize("spec,match", [
    ({"columns": {"a": {"type": "weird"}}}, "unknown type"),
    ({"columns": {"a": {"type": "categorical"}}}, "non-empty 'values'"),
    ({"columns": {"a": {"type": "categorical", "values": [1, 1]}}}, "duplicates"),
    ({"columns": {"a": {"type": "numeric", "min": 5}}}, "'min' and 'max'"),
    ({"columns": {"a": {"type": "numeric", "min": 5, "max": 1}}}, "greater than"),
    ({"columns": {"a": {"type": "numeric", "edges": [0, 2, 1]}}}, "increasing"),
    ({"columns": {"a": {"type": "numeric", "min": 0, "max": 1, "bins": 0}}}, "bins"),
    ({"columns": {"a": {"type": "numeric", "min": 0, "max": 1e9, "bins": 10 ** 6}}}, "too large"),
    ({"columns": {"a": {"type": "id"}}}, "no column to synthesize"),
    ({"nothing": 1}, "columns"),
])
def test_bad_schema(spec, match):
    with pytest.raises(SchemaError, match=match):
        load_schema(spec)


def test_unreadable_schema_file(tmp_path):
    with pytest.raises(SchemaError, match="cannot read schema file"):
        load_schema(tmp_path / "nope.json")
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(SchemaError, match="not valid JSON"):
        load_schema(p)


def test_id_columns_are_not_synthesized():
    df, schema = small_table(50)
    df.insert(0, "pid", np.arange(50) + 1000)
    schema["columns"] = {"pid": {"type": "id"}, **schema["columns"]}
    s = load_schema(schema)
    codes = encode(df, s)
    assert len(codes) == 3
    out = decode(codes, s, seed=0)
    assert out["pid"].tolist() == list(range(1, 51)) and list(out.columns) == list(df.columns)


def test_default_output_dtype_per_column_type():
    schema = load_schema({"columns": {
        "i": {"type": "id"},
        "n": {"type": "numeric", "integer": True, "min": 0, "max": 9, "nullable": True},
        "k": {"type": "numeric", "integer": True, "min": 0, "max": 9},
        "f": {"type": "numeric", "min": 0, "max": 1, "nullable": True},
        "c": {"type": "categorical", "values": ["a", "b"]},
        "w": {"type": "categorical", "values": [0, 1, 2]},
        "h": {"type": "categorical", "values": [0.5, 1.5]},
        "b": {"type": "categorical", "values": [True, False]},
        "m": {"type": "categorical", "values": [1, "b"], "nullable": True}}})
    codes = [np.array(c) for c in ([0, 1, 10], [0, 1, 1], [0, 1, 32], [0, 1, 0], [0, 1, 2],
                                    [0, 1, 0], [0, 1, 0], [0, 1, 2])]  # n, f, m: last is null
    out = decode([c.astype(np.uint8) for c in codes], schema, seed=0)
    text = str(pd.Series(["a"]).dtype)  # pandas' own text dtype: str from pandas 3
    assert [str(t) for t in out.dtypes] == ["int64", "Int64", "int64", "float64", text,
                                            "int64", "float64", "bool", "object"]
    assert out["c"].tolist() == ["a", "b", "a"]
    assert out["w"].tolist() == [0, 1, 2] and out["n"].isna().tolist() == [False] * 2 + [True]
    assert out["m"].tolist() == [1, "b", None] and out["f"].isna().sum() == 1


def test_decode_draws_from_the_backend_equal_numpy(backend, flights, flights_schema):
    from gpu_dpsyn.core import rng
    codes = encode(flights, flights_schema)
    key = rng.split_key(7)
    host = decode(codes, flights_schema, seed=7, call=2)
    dev = decode(codes, flights_schema, seed=7, call=2,
                 uniforms=lambda j, n: backend.to_numpy(backend.uniforms(key, n, j, rng.DECODE, 2)))
    pd.testing.assert_frame_equal(host, dev)
    other = decode(codes, flights_schema, seed=8, call=2)
    assert not host["distance"].equals(other["distance"])  # the draws matter


@pytest.mark.parametrize("mode", ["uniform", "midpoint"])
def test_decoded_values_fall_in_their_bins(flights, flights_schema, mode):
    codes = encode(flights, flights_schema)
    out = decode(codes, flights_schema, seed=1, numeric_decode=mode)
    for a, b in zip(codes, encode(out, flights_schema)):
        assert np.array_equal(a, b)


def test_decode_midpoints_closed_form():
    schema = load_schema({"columns": {
        "k": {"type": "numeric", "integer": True, "edges": [0, 10, 13, 14]},
        "f": {"type": "numeric", "min": 0, "max": 1, "bins": 4}}})
    codes = [np.array([0, 1, 2, 0], np.uint8), np.array([0, 1, 2, 3], np.uint8)]
    mid = decode(codes, schema, numeric_decode="midpoint")
    # integer bins [0, 10), [10, 13), [13, 14): lo + floor((width - 1) / 2)
    assert list(mid["k"]) == [4, 11, 13, 4] and mid["k"].dtype == np.int64
    assert list(mid["f"]) == [0.125, 0.375, 0.625, 0.875]


@pytest.mark.parametrize("values", [["a", None], [1, float("nan")], ["a", ["b"]]])
def test_null_or_non_scalar_in_values_is_a_schema_error(values):
    # a null in the list would make half the column missing; nullable says it instead
    with pytest.raises(SchemaError, match=r"'x'.*'values'"):
        load_schema({"columns": {"x": {"type": "categorical", "values": values}}})


def test_null_in_values_read_from_json(tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"columns": {"x": {"type": "categorical", "values": ["a", null]}}}')
    with pytest.raises(SchemaError, match=r"'x'.*null.*nullable"):
        load_schema(p)


def test_a_repeated_edge_is_a_bin_of_that_one_value():
    """Decimal amounts with many exact zeros (labour income: 41%): edges [0, 0, 0.5, ...]
    give 0 a bin of its own, so it decodes to 0.0 exactly, not spread over [0, 0.5)."""
    schema = load_schema({"columns": {"inc": {"type": "numeric",
                                              "edges": [0, 0, 0.5, 2, 7.5, 7.5]}}})
    col = schema["inc"]
    assert col.bins == 5
    df = pd.DataFrame({"inc": [0.0, 1e-9, 0.49, 0.5, 1.0, 2.0, 7.4, 7.5]})
    codes = encode(df, schema)[0]
    assert list(codes) == [0, 1, 1, 2, 2, 3, 3, 4]
    out = decode([np.array([0, 0, 4, 1, 3])], schema, seed=3)["inc"].to_numpy()
    assert out[0] == 0.0 and out[1] == 0.0 and out[2] == 7.5
    assert 0 <= out[3] < 0.5 and 2 <= out[4] < 7.5
    assert decode([np.array([0, 4])], schema, numeric_decode="midpoint")["inc"].tolist() == \
        [0.0, 7.5]
    from gpu_dpsyn.evaluation.report.labels import code_texts
    assert code_texts(col)[0] == "0" and code_texts(col)[1] == "(0, 0.5)"


@pytest.mark.parametrize("edges,why", [([0, 0, 0, 1], "more than twice"),
                                       ([0, 1, 0.5], "increasing")])
def test_repeated_edges_are_checked(edges, why):
    with pytest.raises(SchemaError, match=why):
        load_schema({"columns": {"x": {"type": "numeric", "edges": edges}}})
    with pytest.raises(SchemaError, match="integer column must be strictly increasing"):
        load_schema({"columns": {"x": {"type": "numeric", "integer": True,
                                       "edges": [0, 0, 1, 5]}}})


@pytest.mark.parametrize("listed,data", [([0.1, 0.2], [0.100000001]),
                                         ([16777216, 3], [16777217.0]),
                                         ([2 ** 53, 1], ["9007199254740993.0"]),
                                         ([12, 1], ["١٢"])])
def test_listed_numbers_match_only_the_same_number(listed, data):
    """Not a float merely close to a listed one, not a number beyond 2**53 that rounds to
    it, not digits of another script: each is an error, never silently that code."""
    schema = load_schema({"columns": {"x": {"type": "categorical", "values": listed}}})
    with pytest.raises(DataError, match="outside the schema"):
        encode(pd.DataFrame({"x": data}), schema)


def test_a_listed_whole_number_past_2_53_matches_its_text_however_written():
    """pandas writes the float 1e22 as "1e+22": read back as text it matched nothing
    (numbers past 2^53 were never matched by value), and 17% of a probe's rows were
    dropped by the draft's own value.  Text is read exactly (decimal), so a different
    integer near it still matches nothing."""
    s = load_schema({"columns": {"u": {"type": "categorical", "values": [1.0, 1e22]}}})
    codes = encode(pd.DataFrame({"u": ["1e+22", "1E22", "10000000000000000000000",
                                       "1.0", "1e+0"]}), s)[0]
    assert codes.tolist() == [1, 1, 1, 0, 0]
    with pytest.raises(DataError):
        encode(pd.DataFrame({"u": ["10000000000000000000001"]}), s)
    with pytest.raises(DataError):  # an exponent past any float: no match, no hang
        encode(pd.DataFrame({"u": ["1e999999999"]}), s)
