"""Bad input that was silently wrong or unclear: trailing delimiters, booleans and complex
numbers in numeric columns, duplicated headers, messages that hide what was wrong, CLI
numbers that look like flags, unbounded iterations, and id columns on the Dask path."""
import json

import numpy as np
import pandas as pd
import pytest

from conftest import one_line_error, small_table
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.inference import infer_schema
from gpu_dpsyn.data.ingest import read_table
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DataError, DPSynError, ParameterError, SchemaError


def _syn(**kw):
    return Synthesizer(1.0, 1e-6, seed=1, backend="cpu", progress=False, iterations=1,
                       adaptive_rounds=0, **kw)


# -- 1a: a trailing delimiter on every data row ------------------------------------------
def test_a_trailing_delimiter_on_every_row_is_read_right(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("color,size\nred,1,\nblue,2,\n")
    df = read_table(p)
    assert list(df.columns) == ["color", "size"]
    assert df["color"].tolist() == ["red", "blue"] and df["size"].tolist() == [1, 2]
    assert df.index.equals(pd.RangeIndex(2))


def test_a_trailing_delimiter_is_read_right_with_a_schema(tmp_path):
    df, schema = small_table(50)
    p = tmp_path / "t.csv"
    p.write_text("color,size,score\n" + "".join(
        f"{c},{s},{x}," + "\n" for c, s, x in df.itertuples(index=False)))
    got = read_table(p, schema=schema)
    encode(got, load_schema(schema))
    assert got["color"].tolist() == df["color"].tolist()
    assert got["score"].tolist() == df["score"].tolist()


def test_an_extra_field_with_values_is_refused_naming_the_file(tmp_path):
    p = tmp_path / "shifted.csv"
    p.write_text("color,size\nred,1,7\nblue,2,8\n")
    with pytest.raises(DataError, match="shifted.csv.*more field") as e:
        read_table(p, lenient=False)  # (lenient, the row-local rule reads it)
    assert "\n" not in str(e.value)


def test_synthesize_of_a_shifted_table_is_one_line(tmp_path, capsys):
    df, schema = small_table(50)
    p, s = tmp_path / "shifted.csv", tmp_path / "s.json"
    p.write_text("color,size,score\n" + "".join(
        f"x,{c},{s},{x}\n" for c, s, x in df.itertuples(index=False)))
    s.write_text(json.dumps(schema))
    assert main(["synthesize", str(p), "--schema", str(s), "--epsilon", "1", "--delta",
                 "1e-6", "--out", str(tmp_path / "o.csv"), "--quiet"]) != 0
    one_line_error(capsys, "shifted.csv", "more field")


# -- 1b: booleans where the schema says numeric ------------------------------------------
@pytest.mark.parametrize("cells", [[True, False] * 5, np.array([True, False] * 5, object),
                                   pd.array([True, False] * 5, dtype="boolean")])
def test_booleans_in_a_numeric_column_are_refused(cells):
    schema = {"columns": {"age": {"type": "numeric", "integer": True, "min": 0,
                                  "max": 99}}}
    with pytest.raises(DataError, match="'age'.*(true/false|boolean)"):
        _syn(on_invalid="error").fit(pd.DataFrame({"age": cells}), schema)


def test_boolean_text_in_a_numeric_csv_column_is_refused(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("age\nTrue\nFalse\n" * 5)
    schema = {"columns": {"age": {"type": "numeric", "min": 0, "max": 99}}}
    with pytest.raises(DataError, match="'age'"):
        encode(read_table(p, schema=schema), load_schema(schema))


def test_booleans_in_a_boolean_categorical_column_are_fine():
    schema = {"columns": {"flag": {"type": "categorical", "values": [False, True]}}}
    codes = encode(pd.DataFrame({"flag": [True, False, True]}), load_schema(schema))
    assert codes[0].tolist() == [1, 0, 1]


@pytest.mark.parametrize("values, cells, codes", [
    # a flag's two spellings: every row was invalid, and the table dropped silently
    ([0, 1], [True, False, True], [1, 0, 1]),
    ([0, 1], np.array([True, False, True]), [1, 0, 1]),
    ([False, True], [1, 0, 1], [1, 0, 1]),
    ([False, True], [1.0, 0.0, 1.0], [1, 0, 1]),
    ([False, True], ["1", "0", "true"], [1, 0, 1]),  # text, as a CSV file has them
    ([1, 0], ["TRUE", "false", 1], [0, 1, 0]),
    ([True, 1, 0], [True, 1, False], [0, 1, 2]),  # each its own where both are listed
    ([False, True], ["1.0", "0.0", 1.0], [1, 0, 1]),  # a float flag column, as pandas
    (["0", "1"], [True, False, "1"], [1, 0, 1]),       # writes one holding NaN
])
def test_zero_and_one_stand_for_false_and_true_in_a_categorical_column(values, cells,
                                                                       codes):
    schema = {"columns": {"flag": {"type": "categorical", "values": values}}}
    got = encode(pd.DataFrame({"flag": pd.Series(cells, dtype=object)}), load_schema(schema))
    assert got[0].tolist() == codes


def test_a_list_of_numbers_reads_booleans_as_pandas_casts_them():
    # [0, 1, 2, 3] counts or codes: a column of booleans that one int record joins is cast
    # to 1/0 (and a CSV column of true/false words to text by one other cell), so True
    # and its words are 1 there, as in a numeric column; a list of text takes none
    schema = load_schema({"columns": {"n": {"type": "categorical", "values": [0, 1, 2, 3]},
                                      "t": {"type": "categorical",
                                            "values": ["0", "1", "2"]}}})
    from gpu_dpsyn.data.matching import value_codes
    assert value_codes([True, "tRUE", 1, "1.0", False], schema["n"]).tolist() == \
        [1, 1, 1, 1, 0]
    assert value_codes([True, "true", "1"], schema["t"]).tolist() == [-1, -1, 1]


def test_a_whole_number_of_two_thousand_digits_matches_its_text():
    from gpu_dpsyn.data.matching import value_codes
    schema = load_schema({"columns": {"n": {"type": "categorical",
                                            "values": [10 ** 2000, 7]}}})
    assert value_codes(["1" + "0" * 2000, 10 ** 2000, 7], schema["n"]).tolist() == [0, 0, 1]


# -- 1c: complex numbers -----------------------------------------------------------------
def test_complex_numbers_are_refused_naming_the_column():
    schema = {"columns": {"z": {"type": "numeric", "min": 0, "max": 10}}}
    with pytest.raises(DataError, match="'z'.*complex"):
        _syn(on_invalid="error").fit(pd.DataFrame({"z": [1 + 2j, 3 + 0j] * 5}), schema)


def test_complex_objects_are_refused_naming_the_column():
    schema = {"columns": {"z": {"type": "numeric", "min": 0, "max": 10}}}
    with pytest.raises(DataError, match="'z'.*complex"):
        encode(pd.DataFrame({"z": np.array([1 + 2j, 3] * 5, dtype=object)}),
               load_schema(schema))


# -- 1d: a duplicated header -------------------------------------------------------------
def test_read_table_refuses_a_duplicated_header(tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("color,size,color\nred,1,blue\n")
    with pytest.raises(DataError, match="dup.csv.*'color'.*more than once"):
        read_table(p)


def test_a_header_that_only_looks_mangled_is_fine(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("color,color.1\nred,blue\n")
    assert list(read_table(p).columns) == ["color", "color.1"]


def test_infer_schema_refuses_a_duplicated_header(tmp_path, capsys):
    p = tmp_path / "dup.csv"
    p.write_text("color,size,color\nred,1,blue\ngreen,2,red\n")
    assert main(["infer-schema", str(p), "--out", str(tmp_path / "s.json")]) != 0
    one_line_error(capsys, "dup.csv", "'color'")
    assert not (tmp_path / "s.json").exists()


# -- 2a: infinity is named as infinity ---------------------------------------------------
def test_infinity_in_categorical_values_is_called_infinity():
    with pytest.raises(SchemaError, match="infinity") as e:
        load_schema({"columns": {"x": {"type": "categorical", "values": [1.0, float("inf")]}}})
    assert "null" not in str(e.value)


@pytest.mark.parametrize("spec", [{"type": "numeric", "min": 0, "max": float("inf")},
                                  {"type": "numeric", "edges": [0, 1, float("inf")]}])
def test_an_infinite_range_is_called_infinity(spec):
    with pytest.raises(SchemaError, match="infinity"):
        load_schema({"columns": {"x": spec}})


@pytest.mark.parametrize("cells", [[1.0, np.inf], ["1", "Infinity"]])
def test_infinity_in_the_data_is_called_infinity(cells):
    schema = {"columns": {"x": {"type": "numeric", "min": 0, "max": 9}}}
    with pytest.raises(DataError, match="'x'.*infinity") as e:
        encode(pd.DataFrame({"x": cells}), load_schema(schema))
    assert "np.float64" not in str(e.value)


# -- 2b: an integer range that holds no integer ------------------------------------------
def test_an_integer_range_without_an_integer_is_refused_at_load():
    spec = {"type": "numeric", "integer": True, "min": 0.5, "max": 0.7}
    with pytest.raises(SchemaError, match=r"'x'.*no integer.*\[0\.5, 0\.7\]"):
        load_schema({"columns": {"x": spec}})


# -- 2c: dates and durations shown as such ------------------------------------------------
@pytest.mark.parametrize("cells, word, text", [
    (pd.to_timedelta(["1D", "3D"]), "duration", "1 days"),
    (pd.to_datetime(["2020-01-01", "2020-02-01"]), "date", "2020-01-01")])
def test_dates_and_durations_in_a_numeric_column_are_shown_as_such(cells, word, text):
    schema = {"columns": {"x": {"type": "numeric", "min": 0, "max": 9}}}
    with pytest.raises(DataError, match=f"'x'.*{word}") as e:
        encode(pd.DataFrame({"x": cells}), load_schema(schema))
    assert text in str(e.value) and "86400" not in str(e.value)


# -- 2e: every echoed value is capped ----------------------------------------------------
HUGE = "v" * 200_000


@pytest.mark.parametrize("make", [
    lambda: encode(pd.DataFrame({"c": [HUGE]}), load_schema(
        {"columns": {"c": {"type": "categorical", "values": ["a"]}}})),
    lambda: encode(pd.DataFrame({"c": [HUGE]}), load_schema(
        {"columns": {"c": {"type": "numeric", "min": 0, "max": 1}}})),
    lambda: encode(pd.DataFrame({"c": [0.5], HUGE: [1]}), load_schema(
        {"columns": {"c": {"type": "numeric", "min": 0, "max": 1}}})),
    lambda: load_schema({"columns": {HUGE: {"type": "numeric", "min": 1, "max": 0}}}),
    lambda: load_schema({"columns": {"c": {"type": "categorical", "values": ["a"], "dtype": HUGE}}}),
    lambda: load_schema({"columns": {"c": {"type": HUGE}}}),
    lambda: read_table(HUGE + ".csv"),
])
def test_echoed_values_are_capped(make):
    with pytest.raises(DPSynError) as e:
        make()
    assert len(str(e.value)) < 1000 and "..." in str(e.value), str(e.value)[:300]


# -- 2f: evaluate names the table that lacks a column ------------------------------------
@pytest.mark.parametrize("short_one", ["synthetic", "real"])
def test_evaluate_without_schema_names_the_table_lacking_a_column(tmp_path, capsys,
                                                                  short_one):
    full = pd.DataFrame({"a": ["x", "y"] * 20, "b": [1, 2] * 20})
    paths = {w: tmp_path / f"{w}.csv" for w in ("real", "synthetic")}
    for w, p in paths.items():
        (full[["a"]] if w == short_one else full).to_csv(p, index=False)
    assert main(["evaluate", str(paths["real"]), str(paths["synthetic"]), "--quiet"]) != 0
    one_line_error(capsys, f"the {short_one} table", f"{short_one}.csv", "'b'")


# -- 2g: negative numbers after a flag reach the range check -----------------------------
@pytest.mark.parametrize("flag, value, word", [("--delta", "-1e-9", "delta"),
                                               ("--epsilon", "-1", "epsilon"),
                                               ("--epsilon", "-1.5e3", "epsilon"),
                                               ("--delta", "-inf", "delta")])
def test_a_negative_number_is_refused_by_its_range_not_by_argparse(tmp_path, capsys, flag,
                                                                  value, word):
    df, schema = small_table(50)
    real, s = tmp_path / "r.csv", tmp_path / "s.json"
    df.to_csv(real, index=False)
    s.write_text(json.dumps(schema))
    args = {"--epsilon": "1", "--delta": "1e-6", flag: value}
    assert main(["synthesize", str(real), "--schema", str(s), "--out", str(tmp_path / "o.csv"),
                 "--quiet", "--epsilon", args["--epsilon"], "--delta", args["--delta"]]) != 0
    one_line_error(capsys, word)
    assert not (tmp_path / "o.csv").exists()


# -- 3: iterations are bounded -----------------------------------------------------------
def test_too_many_iterations_are_refused_before_reading():
    with pytest.raises(ParameterError, match=r"iterations.*at most 10,000"):
        Synthesizer(1.0, 1e-6, iterations=10 ** 8)


def test_the_maximum_number_of_iterations_is_accepted():
    Synthesizer(1.0, 1e-6, iterations=10_000)


def test_cli_too_many_iterations_is_one_line(tmp_path, capsys):
    df, schema = small_table(50)
    real, s = tmp_path / "r.csv", tmp_path / "s.json"
    df.to_csv(real, index=False)
    s.write_text(json.dumps(schema))
    assert main(["synthesize", str(real), "--schema", str(s), "--epsilon", "1", "--delta",
                 "1e-6", "--out", str(tmp_path / "o.csv"), "--iterations", str(10 ** 8),
                 "--quiet"]) != 0
    one_line_error(capsys, "iterations", "10,000")


# -- 1a': one malformed record under the row-local rule ------------------------------------
_RAGGED = {"columns": {"color": {"type": "categorical", "values": ["red", "blue"]},
                       "size": {"type": "numeric", "integer": True, "min": 0, "max": 9}}}


def _ragged(d, extra: bytes = b""):
    """In folder d: a CSV of 60 good rows, then `extra` (a record as bytes), and the
    schema."""
    d.mkdir(exist_ok=True)
    p = d / "t.csv"
    p.write_bytes(b"color,size\n" + b"red,1\nblue,2\n" * 30 + extra)
    (d / "s.json").write_text(json.dumps(_RAGGED))
    return p, d / "s.json"


@pytest.mark.parametrize("extra", [b"red,\xff\n", b"\xfe\xff,4\n"])
def test_one_malformed_record_is_read_by_the_row_local_rule_not_refused(tmp_path, capsys,
                                                                         extra):
    # bytes that are no UTF-8 refused the whole file: whether a release was made
    # depended on one record
    base, s = _ragged(tmp_path / "base")
    p, _ = _ragged(tmp_path / "more", extra)
    df = read_table(p, schema=_RAGGED)  # lenient, as fit's default rule
    good = read_table(base, schema=_RAGGED)  # the others read as before (their dtype
    assert len(df) == 61 and df.iloc[:60].astype(str).equals(good.astype(str))  # aside)
    runs = []
    for path in (base, p):
        code = main(["synthesize", str(path), "--schema", str(s), "--epsilon", "1",
                     "--delta", "1e-6", "--seed", "1", "--out", str(path) + ".out.csv",
                     "--quiet"])
        warned = [x for x in capsys.readouterr().err.splitlines() if "warning" in x]
        runs.append((code, [x.split(" at ")[0] for x in warned]))  # (the count is noisy)
    assert runs[0] == runs[1] and runs[0][0] == 0
    with pytest.raises(DataError, match="t.csv"):  # strict: the file is refused
        read_table(p, schema=_RAGGED, lenient=False)
    assert main(["synthesize", str(p), "--schema", str(s), "--epsilon", "1", "--delta",
                 "1e-6", "--on-invalid", "error", "--out", str(tmp_path / "o.csv"),
                 "--quiet"]) != 0
    one_line_error(capsys, "t.csv", "")


@pytest.mark.parametrize("text", [
    # a quote left open swallows the rows up to the next quote: ignoring the fields past
    # the header's read them as one record (three records gone, silently); and a file of
    # R's row names (one more field on every row) was read shifted
    'color,size\nred,1\nred,"2\nred,3\nred,5\n"blue",4\nred,6\n',
    '"color","size"\n' + "".join(f'"{i}","red",1\n' for i in range(1, 51))])
def test_rows_with_more_fields_than_the_header_are_refused_not_cut(tmp_path, text):
    p = tmp_path / "t.csv"
    p.write_text(text)
    with pytest.raises(DataError, match="t.csv"):
        read_table(p, schema=_RAGGED)


@pytest.mark.parametrize("extra, said", [
    (b"red,1,2\n", "data row 61 has 3 fields, the header 2"),
    (b'red,"1\nblue,2\n', "a quote opened in data row 61 is never closed")])
def test_a_malformed_record_is_named_in_words_not_the_tokenizer_s(tmp_path, capsys, extra,
                                                                  said):
    # was "Error tokenizing data. C error: Expected 2 fields in line 62, saw 3" (and "EOF
    # inside string starting at row 61"): the parser's words, its own count of lines
    p, s = _ragged(tmp_path / "d", extra)
    assert main(["synthesize", str(p), "--schema", str(s), "--epsilon", "1", "--delta",
                 "1e-6", "--out", str(tmp_path / "o.csv"), "--quiet"]) == 2
    one_line_error(capsys, "t.csv", said)
    assert not (tmp_path / "o.csv").exists()


def test_check_names_a_malformed_record_for_the_curator(tmp_path, capsys):
    p, s = _ragged(tmp_path / "d", b"red,\xff\n")
    assert main(["check", str(p), "--schema", str(s)]) == 1
    out = capsys.readouterr().out
    assert "t.csv: a strict read refuses it" in out and "utf-8" in out


def test_a_fifo_or_device_as_the_input_is_named_as_one(tmp_path):
    import os
    from gpu_dpsyn.errors import DPSynError
    fifo = tmp_path / "ff.csv"
    os.mkfifo(fifo)
    for p in (fifo, "/dev/null"):
        with pytest.raises(DPSynError, match="not a regular file"):
            read_table(p)
