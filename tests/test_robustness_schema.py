"""Schema strictness: unknown keys are errors (with a hint), booleans are JSON booleans, a
key given twice is refused, and the limits on bins apply before anything is allocated."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from conftest import FLIGHTS_SCHEMA, small_table
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.data.inference import infer_schema
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import SchemaError

NUM = {"type": "numeric", "integer": True, "min": 0, "max": 9}
CAT = {"type": "categorical", "values": ["a", "b"]}


def _refused(spec, *parts):
    with pytest.raises(SchemaError) as e:
        load_schema(spec)
    msg = str(e.value)
    assert "\n" not in msg and all(p in msg for p in parts), msg
    return msg


# -- unknown keys ---------------------------------------------------------------------------
def test_a_misspelt_top_level_key_is_refused_with_a_hint():
    """max_record_per_individual (no s) was ignored: the ledger said one record per person."""
    _refused({"columns": {"c": CAT}, "max_record_per_individual": 5},
             "'max_record_per_individual'", "did you mean 'max_records_per_individual'")


@pytest.mark.parametrize("col,key,hint", [
    ({**NUM, "bin": 3}, "'bin'", "did you mean 'bins'"),
    ({**NUM, "nulable": True}, "'nulable'", "did you mean 'nullable'"),
    ({**CAT, "value": ["a"]}, "'value'", "did you mean 'values'"),
    ({**CAT, "bins": 3}, "'bins'", "categorical"),
    ({"type": "id", "values": [1]}, "'values'", "id"),
    ({"type": "datetime", "min": "2020-01-01", "max": "2020-12-31", "units": "day"},
     "'units'", "did you mean 'unit'"),
    ({**NUM, "bins": {"private_quantiles": 4, "gird": 64}}, "'gird'", "did you mean 'grid'"),
    ({**NUM, "support": {"stp": 2}}, "'stp'", "did you mean 'step'"),
])
def test_an_unknown_column_key_names_the_column_and_the_key(col, key, hint):
    _refused({"columns": {"x": col, "c": CAT}}, "column 'x'", key, hint)


def test_an_unknown_key_in_a_nist_run_is_refused():
    _refused({"schema": {"SEX": {"dtype": "uint8", "values": [1, 2]}},
              "runs": [{"epsilon": 1, "delta": 1e-9, "max_record_per_individual": 7}]},
             "'max_record_per_individual'", "did you mean 'max_records_per_individual'")


def test_a_misspelt_key_is_refused_before_any_charge():
    df, schema = small_table(100)
    schema["columns"]["score"]["bin"] = 3
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False)
    with pytest.raises(SchemaError, match="did you mean 'bins'"):
        syn.fit(df, schema)
    assert syn.ledger == []


# -- booleans ------------------------------------------------------------------------------
@pytest.mark.parametrize("key,value", [("nullable", "false"), ("integer", "no"),
                                       ("nullable", 0), ("integer", 1)])
def test_booleans_must_be_json_booleans(key, value):
    _refused({"columns": {"x": {**NUM, key: value}, "c": CAT}}, "column 'x'", f"'{key}'",
             "true or false")


def test_a_derived_columns_nullable_must_be_a_boolean():
    _refused({"columns": {"n": NUM, "y": {"type": "derived", "from": "n", "op": "mod",
                                          "by": 2, "nullable": "false"}}},
             "column 'y'", "'nullable'", "true or false")


# -- a key given twice -------------------------------------------------------------------------
def test_a_key_given_twice_in_a_column_is_refused(tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"columns": {"x": {"type": "numeric", "min": 0, "max": 9, "bins": 3, '
                 '"bins": 300}}}')
    _refused(p, "column 'x'", "'bins'", "twice")


def test_a_top_level_key_given_twice_is_refused(tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"columns": {"c": {"type": "categorical", "values": ["a"]}}, '
                 '"max_records_per_individual": 5, "max_records_per_individual": 1}')
    _refused(p, "'max_records_per_individual'", "twice")


# -- limits before allocation ----------------------------------------------------------------
def _load_in_a_small_box(spec: dict) -> str:
    """load_schema(spec) in a child process limited to 2 GiB of address space and 60 s:
    a schema that allocates gigabytes or loops 10^9 times fails there, not here."""
    code = textwrap.dedent("""
        import json, resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        from gpu_dpsyn.data.schema import load_schema
        from gpu_dpsyn.errors import SchemaError
        try:
            load_schema(json.loads(sys.argv[1]))
        except SchemaError as e:
            print("SchemaError:", e)
        else:
            print("accepted")
    """)
    try:
        r = subprocess.run([sys.executable, "-c", code, json.dumps(spec)],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("loading the schema did not finish in 60 s")
    assert r.returncode == 0, r.stderr[-500:]
    return r.stdout


@pytest.mark.parametrize("col", [
    {"type": "numeric", "min": 0, "max": 1, "bins": 10 ** 9},
    {"type": "numeric", "integer": True, "min": 0, "max": 10 ** 12, "bins": 10 ** 9},
    {"type": "datetime", "min": "1900-01-01", "max": "2200-01-01", "bins": 10 ** 9},
])
def test_huge_bins_are_refused_before_anything_is_allocated(col):
    out = _load_in_a_small_box({"columns": {"x": col}})
    assert out.startswith("SchemaError:") and "column 'x'" in out and "'bins'" in out, out


def test_a_huge_edges_list_is_refused():
    _refused({"columns": {"x": {"type": "numeric", "edges": list(range(70000))}}},
             "column 'x'", "'edges'")


# -- what is accepted stays accepted ---------------------------------------------------------
def test_numpy_scalars_in_a_dict_schema_are_accepted():
    s = load_schema({"columns": {
        "x": {"type": "numeric", "integer": np.True_, "min": np.int64(0),
              "max": np.int64(9), "bins": np.int64(3), "nullable": np.False_},
        "f": {"type": "numeric", "min": np.float64(0), "max": np.float32(1)},
        "c": {"type": "categorical", "values": [np.int64(1), np.int64(2)]}},
        "max_records_per_individual": np.int64(2)})
    assert s["x"].bins == 3 and s.max_records_per_individual == 2


def test_the_bundled_schema_and_saved_schemas_load(tmp_path, flights):
    s = load_schema(FLIGHTS_SCHEMA)
    assert load_schema(s.to_dict()).to_dict() == s.to_dict()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inferred = infer_schema(flights.iloc[:2000])
    p = tmp_path / "s.json"
    inferred.save(p)
    assert [c.edges for c in load_schema(p).columns] == [c.edges for c in inferred.columns]


def test_a_nist_file_with_kind_and_list_columns_loads():
    s = load_schema({"columns": [{"name": "a", "kind": "categorical", "values": [1, 2]},
                                 {"name": "b", "type": "int", "min": 0, "max": 5}]})
    assert s["a"].kind == "categorical" and s["b"].integer


@pytest.mark.parametrize("extra,key", [({"min": 0, "max": 100}, "'max'"),
                                       ({"max": 100}, "'max'"), ({"min": -5}, "'min'"),
                                       ({"bins": 3}, "'bins'")])
def test_edges_with_another_range_or_bins_is_refused_not_half_ignored(extra, key):
    """'edges' decide the bins: a 'max' or 'bins' beside them was silently ignored."""
    _refused({"columns": {"x": {"type": "numeric", "edges": [0, 5, 10], **extra}}},
             "column 'x'", key, "disagrees with 'edges'")


def test_edges_with_the_same_range_are_accepted():
    s = load_schema({"columns": {
        "t": {"type": "numeric", "integer": True, "min": 0, "max": 2400, "support": "hhmm",
              "edges": [0, 600, 1200, 1800, 2401]},
        "f": {"type": "numeric", "min": 0, "max": 10, "bins": 2, "edges": [0, 5, 10]}}})
    assert s["t"].bins == 4 and s["f"].bins == 2


def test_numpy_scalars_as_categorical_values_are_the_values_they_print_as():
    # np.float32(0.1) came out as 0.10000000149011612; NaN of float32 passed as a value
    from gpu_dpsyn import Synthesizer
    spec = {"type": "categorical", "values": [np.float32(0.1), np.float32(0.2)]}
    s = load_schema({"columns": {"v": spec}})
    assert s["v"].values == [0.1, 0.2] and all(type(v) is float for v in s["v"].values)
    out = Synthesizer(1.0, 1e-9, seed=0, backend="cpu", progress=False, iterations=2).fit(
        pd.DataFrame({"v": [0.1, 0.2] * 50}), {"columns": {"v": spec}}).sample(50)
    assert set(out["v"]) <= {0.1, 0.2}
    mixed = load_schema({"columns": {"v": {"type": "categorical", "values": [
        np.int64(3), np.bool_(True), np.str_("x")]}}})["v"].values
    assert mixed == [3, True, "x"] and [type(v) for v in mixed] == [int, bool, str]
    for bad in (np.float32("nan"), np.complex128(1j), np.datetime64("2020-01-01")):
        with pytest.raises(SchemaError, match="'v'"):
            load_schema({"columns": {"v": {"type": "categorical", "values": [1, bad]}}})


@pytest.mark.parametrize("spec", [{"kind": "int", "min": 0, "max": 120},
                                  {"type": "numeric", "kind": "int", "min": 0, "max": 120},
                                  {"kind": "integer", "min": 0, "max": 120}])
def test_kind_int_makes_an_integer_column_as_type_int_does(spec):
    # "kind" stands for "type", but only "type" made the column integer: floats came out
    assert load_schema({"columns": {"age": spec}})["age"].integer
    assert not load_schema({"columns": {"age": dict(spec, kind="float")}})["age"].integer


@pytest.mark.parametrize("spec", [{"type": "integer", "integer": False, "min": 0, "max": 9},
                                  {"kind": "int", "integer": False, "min": 0, "max": 9},
                                  {"type": "float", "integer": True, "min": 0, "max": 9},
                                  {"type": "float", "dtype": "int64", "min": 0, "max": 9}])
def test_a_type_and_an_integer_flag_that_disagree_are_refused(spec):
    with pytest.raises(SchemaError, match="column 'x'.*integer"):
        load_schema({"columns": {"x": spec}})


@pytest.mark.parametrize("spec", [
    {"type": "categorical", "values": ["a", "other"], "nullable": True, "fallback": "other"},
    {"type": "numeric", "min": 0, "max": 9, "nullable": True, "fallback": 0}])
def test_a_fallback_in_a_nullable_column_is_refused_not_ignored(spec):
    # an invalid value of a nullable column is made missing: the fallback was never used
    with pytest.raises(SchemaError, match="column 'x'.*'fallback'.*nullable"):
        load_schema({"columns": {"x": spec}})


def test_a_huge_integer_range_is_named_in_a_short_line():
    # the message printed the integer's 300 digits
    with pytest.raises(SchemaError, match=r"integer range \[0, 1e\+300\] goes beyond") as e:
        load_schema({"columns": {"x": {"type": "numeric", "integer": True, "min": 0,
                                       "max": 1e300}}})
    assert len(str(e.value)) < 200


def test_a_fit_at_a_budget_no_nist_run_names_is_warned_of():
    # the runs' epsilon and delta were read and ignored without a word
    df, spec = small_table(200)
    nist = {"schema": spec["columns"], "runs": [{"epsilon": 0.3, "delta": 1e-9},
                                                {"epsilon": 8, "delta": 1e-9}]}
    with pytest.warns(UserWarning, match=r"runs name .*\(0.3, 1e-09\), \(8, 1e-09\).*\(1, "):
        Synthesizer(1.0, 1e-9, backend="cpu", progress=False, iterations=1,
                    adaptive_rounds=0).fit(df, nist)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Synthesizer(8.0, 1e-9, backend="cpu", progress=False, iterations=1,
                    adaptive_rounds=0).fit(df, nist)


def test_a_fallback_in_a_nullable_column_built_in_python_is_refused_too():
    from gpu_dpsyn.data.schema import Column, Schema
    with pytest.raises(SchemaError, match="'fallback'.*nullable"):
        Schema([Column("x", "categorical", values=["a", "b"], nullable=True, fallback="a")])


@pytest.mark.parametrize("doc", [
    {"columns": {"c": {"type": "categorical", "values": ["red", "\ud800"]}}},
    {"columns": {"c": {"type": "categorical", "values": ["red", "x"], "fallback": "\udfff"}}},
    {"columns": {"c\ud800": {"type": "categorical", "values": ["red", "x"]}}},
])
def test_text_that_is_no_utf8_is_refused_as_the_schema_is_read(doc, tmp_path):
    """JSON's "\\ud800" escape is a lone surrogate, which no file can hold: the writer
    failed after the whole budget was spent. Refused with one line before anything."""
    with pytest.raises(SchemaError, match="no UTF-8") as e:
        load_schema(doc)
    assert "\n" not in str(e.value)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))  # (ensure_ascii: the escape as written)
    with pytest.raises(SchemaError, match="no UTF-8"):
        load_schema(str(path))


def test_a_nullable_column_listing_the_empty_text_is_refused():
    """A CSV holds "" and a missing value alike (empty cells): a nullable column listing
    "" would read its "" as missing from a CSV but not from Parquet. Refused, as nullable
    with a fallback is; either alone stays."""
    with pytest.raises(SchemaError, match="'c'.*\"\".*nullable"):
        load_schema({"columns": {"c": {"type": "categorical", "values": ["a", ""],
                                       "nullable": True}}})
    load_schema({"columns": {"c": {"type": "categorical", "values": ["a", ""]}}})
    load_schema({"columns": {"c": {"type": "categorical", "values": ["a"], "nullable": True}}})
