"""A CSV in another dialect (the schema's "csv": separator, decimal mark, digit grouping,
encoding): read as its UTF-8, comma-separated twin, row by row, and the synthetic CSV
written the same way."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.cli import main
from gpu_dpsyn.data.dialect import Dialect, dialect_from_spec
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.ingest import read_table
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DPSynError, SchemaError

FRENCH = {"separator": ";", "decimal": ",", "thousands": " ", "encoding": "cp1252"}


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"Région": rng.choice(["Île-de-France", "Bretagne", "Grand Est"], n),
                         "Revenu": np.round(rng.lognormal(7.7, 0.5, n), 2),
                         "Note": rng.choice([1.5, 2.5, 3.0], n),
                         "Âge": rng.integers(18, 90, n)})


def _columns(csv=None):
    doc = {"columns": {"Région": {"type": "categorical",
                                  "values": ["Bretagne", "Grand Est", "Île-de-France"]},
                       "Revenu": {"type": "numeric", "min": 0, "max": 20000, "bins": 16},
                       "Note": {"type": "categorical", "values": [1.5, 2.5, 3.0]},
                       "Âge": {"type": "numeric", "integer": True, "min": 0, "max": 120,
                               "bins": 12}}}
    if csv is not None:
        doc["csv"] = csv
    return doc


def _french(df: pd.DataFrame, path) -> None:
    """df as a French spreadsheet saves it: '2 399,80', semicolons, Windows-1252."""
    out = df.copy()
    out["Revenu"] = [f"{v:,.2f}".replace(",", " ").replace(".", ",") for v in df["Revenu"]]
    out["Note"] = [f"{v:.1f}".replace(".", ",") for v in df["Note"]]
    out.to_csv(path, sep=";", index=False, encoding="cp1252")


def test_a_file_in_a_dialect_reads_as_its_plain_twin(tmp_path):
    df = _table()
    plain, french = tmp_path / "p.csv", tmp_path / "f.csv"
    df.to_csv(plain, index=False)
    _french(df, french)
    a = load_schema(_columns())
    b = load_schema(_columns(FRENCH))
    got = encode(read_table(str(french), schema=b), b)
    want = encode(read_table(str(plain), schema=a), a)
    assert all(np.array_equal(x, y) for x, y in zip(got, want))


def test_one_bad_number_changes_no_other_record(tmp_path):
    df = _table(50)
    french = tmp_path / "f.csv"
    _french(df, french)
    text = french.read_bytes().decode("cp1252").splitlines()
    text[3] = text[3].replace(";", ";n/a", 1).replace(";n/a", ";", 1)
    cells = text[3].split(";")
    cells[1] = "n/a"  # Revenu
    text[3] = ";".join(cells)
    french.write_bytes(("\r\n".join(text) + "\r\n").encode("cp1252"))
    s = load_schema(_columns(FRENCH))
    read = read_table(str(french), schema=s)
    assert read["Revenu"].iloc[2] == "n/a"
    expect = df["Revenu"].round(2).to_numpy()
    got = pd.to_numeric(read["Revenu"], errors="coerce").to_numpy()
    keep = np.arange(50) != 2
    np.testing.assert_allclose(got[keep], expect[keep])


def test_synthesize_writes_the_dialect_it_read(tmp_path):
    df = _table(600, seed=1)
    data, schema, out = tmp_path / "f.csv", tmp_path / "s.json", tmp_path / "o.csv"
    _french(df, data)
    schema.write_text(json.dumps(_columns(FRENCH), ensure_ascii=False), encoding="utf-8")
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "2",
                 "--delta", "1e-9", "--out", str(out), "--seed", "3"]) == 0
    raw = out.read_bytes()
    raw.decode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # 'Région' in Windows-1252
    back = pd.read_csv(out, sep=";", decimal=",", thousands=" ", encoding="cp1252")
    assert list(back.columns) == ["Région", "Revenu", "Note", "Âge"]
    assert back["Revenu"].dtype == np.float64 and back["Revenu"].between(0, 20000).all()
    assert set(back["Note"]) <= {1.5, 2.5, 3.0}
    assert main(["evaluate", str(data), str(out), "--schema", str(schema)]) == 0


@pytest.mark.parametrize("spec,match", [
    ({"separator": ""}, "separator"), ({"separator": "ab"}, "separator"),
    ({"separator": '"'}, "separator"), ({"separator": "\n"}, "separator"),
    ({"decimal": "x"}, "decimal"), ({"separator": ",", "decimal": ","}, "apart"),
    ({"decimal": ",", "thousands": ","}, "apart"), ({"thousands": "_"}, "thousands"),
    ({"encoding": "utf-16"}, "ASCII"), ({"encoding": "no-such-codec"}, "unknown"),
    ({"sep": ";"}, "sep"), ({"encoding": 8}, "encoding")])
def test_bad_dialects_are_refused(spec, match):
    with pytest.raises(SchemaError, match=match):
        load_schema(_columns(spec))


def test_the_dialect_round_trips_and_defaults_are_left_out():
    s = load_schema(_columns(FRENCH))
    assert s.csv == Dialect(";", ",", " ", "cp1252")
    assert load_schema(s.to_dict()).csv == s.csv
    assert "csv" not in load_schema(_columns()).to_dict()
    assert dialect_from_spec({"separator": "\t"}).to_dict() == {"separator": "\t"}


def test_text_the_encoding_cannot_write_is_refused_before_the_fit(tmp_path, capsys):
    doc = _columns(FRENCH)
    doc["columns"]["Région"]["values"].append("Łódź")  # not in Windows-1252
    data, schema, out = tmp_path / "f.csv", tmp_path / "s.json", tmp_path / "o.csv"
    _french(_table(100), data)
    schema.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    ledger = tmp_path / "l.json"
    rc = main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "1",
               "--delta", "1e-9", "--out", str(out), "--ledger", str(ledger)])
    assert rc != 0 and not out.exists() and not ledger.exists()
    assert "'Łódź'" in capsys.readouterr().err


def test_a_utf16_file_is_named_so(tmp_path, capsys):
    # its column names read as '\ufffd\ufffdc\x00': a garbled column mismatch
    data, schema = tmp_path / "u.csv", tmp_path / "s.json"
    data.write_bytes(_table(20).to_csv(index=False).encode("utf-16"))
    schema.write_text(json.dumps(_columns()))
    assert main(["check", str(data), "--schema", str(schema)]) == 2
    err = capsys.readouterr().err
    assert "UTF-16" in err and err.count("\n") == 1


def test_a_semicolon_header_without_a_dialect_names_the_key(tmp_path):
    data = tmp_path / "f.csv"
    _french(_table(20), data)
    with pytest.raises(DPSynError, match=r"\"csv\": \{\"separator\": \";\"\}"):
        read_table(str(data), schema=load_schema(_columns()))


def test_infer_schema_drafts_the_dialect(tmp_path, capsys):
    data, schema = tmp_path / "f.csv", tmp_path / "s.json"
    _french(_table(500, seed=4), data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    doc = json.loads(schema.read_text(encoding="utf-8"))
    assert doc["csv"] == FRENCH
    assert "Région" in doc["columns"] and doc["columns"]["Revenu"]["type"] == "numeric"
    assert doc["columns"]["Note"]["values"] == [1.5, 2.5, 3.0]
    err = capsys.readouterr().err
    assert "semicolon" in err and "cp1252" in err and "decimal" in err


def test_infer_schema_takes_the_dialect_given(tmp_path):
    data, schema = tmp_path / "t.tsv.csv", tmp_path / "s.json"
    _table(200).to_csv(data, sep="\t", index=False, encoding="latin-1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema), "--separator", "\t",
                     "--encoding", "latin-1"]) == 0
    doc = json.loads(schema.read_text(encoding="utf-8"))
    assert doc["csv"] == {"separator": "\t", "encoding": "latin-1"}
    assert "Île-de-France" in doc["columns"]["Région"]["values"]


@pytest.mark.parametrize("row_local", [False, True])
def test_dask_reads_the_dialect_as_read_table_does(tmp_path, row_local):
    from gpu_dpsyn.distributed.reading import read_partitioned
    df = _table(120, seed=5)
    french = tmp_path / "f.csv"
    _french(df, french)
    s = load_schema(_columns(FRENCH))
    got = read_partitioned(str(french), s, row_local=row_local).compute()
    want = read_table(str(french), schema=s)
    assert all(np.array_equal(x, y) for x, y in zip(encode(got.reset_index(drop=True), s),
                                                     encode(want, s)))


def test_the_schema_command_sets_the_dialect(tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps(_columns()))
    assert main(["schema", str(schema), "--set", "csv.separator=;",
                 "--set", "csv.encoding=cp1252"]) == 0
    assert json.loads(schema.read_text())["csv"] == {"separator": ";", "encoding": "cp1252"}
    assert main(["schema", str(schema), "--set", "csv.encoding=utf-16"]) == 2  # validated
    assert main(["schema", str(schema), "--set", "csv.encoding=null"]) == 0
    assert json.loads(schema.read_text())["csv"] == {"separator": ";"}


# -- from the review of the dialects --------------------------------------------------------

def _round_trip(df, d, tmp_path, schema_doc):
    """df written by write_table in the dialect d and read back by read_table under a
    schema in d."""
    from gpu_dpsyn.data.ingest import write_table
    path = tmp_path / "rt.csv"
    write_table(df, str(path), dialect=d)
    doc = dict(schema_doc, csv=d.to_dict())
    return path, read_table(str(path), schema=load_schema(doc))


def test_a_bom_is_written_once(tmp_path, monkeypatch):
    from gpu_dpsyn.data import csv_text
    monkeypatch.setattr(csv_text, "ROWS", 2)  # several blocks
    df = pd.DataFrame({"g": ["a", "b", "c", "d", "e"], "x": [1.5, 2.0, 3.0, 4.0, 5.5]})
    doc = {"columns": {"g": {"type": "categorical", "values": list("abcde")},
                       "x": {"type": "numeric", "min": 0, "max": 10}}}
    path, back = _round_trip(df, Dialect(encoding="utf-8-sig"), tmp_path, doc)
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and raw.count(b"\xef\xbb\xbf") == 1
    assert back["g"].tolist() == list("abcde")


@pytest.mark.parametrize("sep,ok", [("-", False), (" ", False), (":", False), (".", False),
                                    ("/", False), ("\t", True), ("|", True), (";", True)])
def test_only_separators_no_number_or_date_holds_are_taken(sep, ok):
    # numbers, dates and times are written unquoted: "-5--1.5-2020-01-01" read back wrong
    if ok:
        assert dialect_from_spec({"separator": sep}).separator == sep
    else:
        with pytest.raises(SchemaError, match="separator"):
            dialect_from_spec({"separator": sep})


def test_numbers_round_trip_in_a_decimal_comma_dialect(tmp_path):
    x = np.array([4.84e-05, -1.5e3, 1e-300, 123456789012.5, 0.1, -0.0, 2.5e16, 7.0])
    df = pd.DataFrame({"x": x, "c": pd.Categorical([1.125, 2.5, 1250.0, 2.5] * 2),
                       "k": ["a"] * 8})
    doc = {"columns": {"x": {"type": "numeric", "min": -1e20, "max": 1e20},
                       "c": {"type": "categorical", "values": [1.125, 2.5, 1250.0],
                             "dtype": "category"},
                       "k": {"type": "categorical", "values": ["a"]}}}
    d = Dialect(";", ",", ".", "utf-8")
    path, back = _round_trip(df, d, tmp_path, doc)
    assert np.array_equal(pd.to_numeric(back["x"]).to_numpy(), x)
    assert pd.to_numeric(back["c"]).tolist() == [1.125, 2.5, 1250.0, 2.5] * 2
    assert Dialect(";", ",").number(pd.Series(["4,84e-05", "-1,5E3", "x"])).tolist() == \
        ["4.84e-05", "-1.5E3", "x"]


def test_a_derived_column_is_read_in_the_dialect(tmp_path, capsys):
    data, schema = tmp_path / "d.csv", tmp_path / "s.json"
    data.write_text("cents;euros;g\n1 234 567;12 345;a\n250;2;a\n")
    schema.write_text(json.dumps({"csv": {"separator": ";", "thousands": " "}, "columns": {
        "cents": {"type": "numeric", "integer": True, "min": 0, "max": 10 ** 7},
        "euros": {"type": "derived", "from": "cents", "op": "floordiv", "by": 100},
        "g": {"type": "categorical", "values": ["a"]}}}))
    assert main(["check", str(data), "--schema", str(schema)]) == 0, capsys.readouterr()


def test_a_bad_encoding_flag_is_one_line(tmp_path, capsys):
    data = tmp_path / "t.csv"
    _table(20).to_csv(data, index=False)
    assert main(["infer-schema", str(data), "--out", str(tmp_path / "s.json"),
                 "--encoding", "bogus"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bogus" in err


def _excel_general(v: float) -> str:
    """A number as Excel's General format writes it in a German locale: 12, 12,5."""
    return f"{v:.2f}".rstrip("0").rstrip(".").replace(".", ",")


def test_a_draft_finds_decimal_commas_beside_whole_numbers(tmp_path):
    # "12" beside "12,5": no 90% of the values held a comma, so the column was text
    rng = np.random.default_rng(6)
    data, schema = tmp_path / "g.csv", tmp_path / "s.json"
    pd.DataFrame({"Preis": [_excel_general(v) for v in np.round(rng.gamma(2, 8, 800) * 2) / 2],
                  "Typ": rng.choice(["A", "B"], 800)}).to_csv(data, sep=";", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    doc = json.loads(schema.read_text())
    assert doc["csv"] == {"separator": ";", "decimal": ","}
    preis = load_schema(doc)["Preis"]  # 95 prices in half steps: listed, as numbers
    assert preis.kind == "numeric" or all(isinstance(v, float) for v in preis.values)


def test_a_draft_finds_dots_that_group_digits(tmp_path):
    # "2.804" in a ";" file: read as 2.804 beside 891, 1000 times too small, unsaid
    rng = np.random.default_rng(7)
    data, schema = tmp_path / "de.csv", tmp_path / "s.json"
    amounts = rng.integers(1, 50000, 900)
    pd.DataFrame({"Betrag": [f"{v:,}".replace(",", ".") for v in amounts],
                  "Typ": rng.choice(["A", "B"], 900)}).to_csv(data, sep=";", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    doc = json.loads(schema.read_text())
    assert doc["csv"] == {"separator": ";", "decimal": ",", "thousands": "."}
    col = load_schema(doc)["Betrag"]
    assert col.value_range[1] >= 40000
    assert main(["infer-schema", str(data), "--out", str(tmp_path / "t.json"),
                 "--thousands", "."]) == 0  # a dot that groups: the decimal mark is a comma


def test_a_bom_is_drafted_and_kept(tmp_path):
    data, schema = tmp_path / "b.csv", tmp_path / "s.json"
    data.write_bytes(_table(30).to_csv(index=False).encode("utf-8-sig"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    assert json.loads(schema.read_text())["csv"] == {"encoding": "utf-8-sig"}


@pytest.mark.parametrize("spelling", ["UTF8", "utf_8", "U8"])
def test_utf8_by_any_name_is_the_default(spelling):
    assert dialect_from_spec({"encoding": spelling}) == Dialect()


@pytest.mark.parametrize("text", ["\\t", "tab", "TAB"])
def test_a_tab_is_taken_as_written_on_a_command_line(tmp_path, text):
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps(_columns()))
    assert main(["schema", str(schema), "--set", f"csv.separator={text}"]) == 0
    assert json.loads(schema.read_text())["csv"] == {"separator": "\t"}


def test_a_headerless_file_in_another_dialect_is_not_echoed(tmp_path, capsys):
    data, schema = tmp_path / "h.csv", tmp_path / "s.json"
    data.write_text("Smith;Jo;40\nLee;Al;41\n")
    schema.write_text(json.dumps(_columns()))
    assert main(["check", str(data), "--schema", str(schema)]) == 2
    err = capsys.readouterr().err
    assert "Smith" not in err and "header" in err and err.count("\n") == 1
    data.write_text("Smith,Smith,40\nLee,Al,41\n")
    assert main(["check", str(data), "--schema", str(schema)]) == 2
    err = capsys.readouterr().err
    assert "Smith" not in err and "header" in err


def test_excels_separator_line_is_named(tmp_path, capsys):
    data = tmp_path / "x.csv"
    data.write_text("sep=;\na;b\n1;2\n3;4\n")
    assert main(["infer-schema", str(data), "--out", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert "sep=;" in err and err.count("\n") == 1


def test_changing_a_drafts_dialect_says_to_draft_again(tmp_path, capsys):
    data, schema = tmp_path / "f.csv", tmp_path / "s.json"
    _french(_table(200), data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    capsys.readouterr()
    assert main(["schema", str(schema), "--set", "csv.encoding=latin-1"]) == 0
    assert "infer-schema" in capsys.readouterr().err  # its listed values read in cp1252


# -- second review: evidence before a dialect is drafted ------------------------------------

def _drafted(tmp_path, text: str, *flags):
    data, schema = tmp_path / "x.csv", tmp_path / "x.json"
    data.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema), *flags]) == 0
    return json.loads(schema.read_text())


def test_dot_decimals_with_three_places_are_no_grouping(tmp_path):
    # 0.250 kg beside 28.71: drafted thousands ".", and every row was then invalid
    rng = np.random.default_rng(12)
    w = rng.choice(["0.125", "0.250", "0.500", "0.750", "1.000", "1.500", "2.500"], 300)
    p = [f"{v:.2f}" for v in rng.uniform(1, 99, 300)]
    doc = _drafted(tmp_path, "weight_kg;price;g\n" + "".join(
        f"{a};{b};a\n" for a, b in zip(w, p)))
    assert doc["csv"] == {"separator": ";"}
    s = load_schema(doc)
    assert all(isinstance(v, float) for v in s["weight_kg"].values)


def test_commas_that_group_thousands_are_no_decimal_mark(tmp_path):
    # 2,652 in a tab file beside 20.50: read as 2.652
    rng = np.random.default_rng(13)
    sales = [f"{v:,}" for v in rng.integers(1, 9000, 300)]
    price = [f"{v:.2f}" for v in rng.uniform(1, 99, 300)]
    doc = _drafted(tmp_path, "sales\tprice\n" + "".join(
        f"{a}\t{b}\n" for a, b in zip(sales, price)))
    assert doc["csv"].get("decimal", ".") == "."


def test_a_given_grouping_mark_is_kept(tmp_path):
    rows = ["12,5"] * 300 + ["1 332,5", "2 001,5", "3 999,0"]
    doc = _drafted(tmp_path, "x;g\n" + "".join(f"{v};a\n" for v in rows),
                   "--thousands", " ")
    assert doc["csv"] == {"separator": ";", "decimal": ",", "thousands": " "}


def test_a_category_mixing_numbers_and_text_reads_back_in_the_dialect(tmp_path):
    doc = {"csv": {"separator": ";", "decimal": ","}, "columns": {
        "m": {"type": "categorical", "values": [1.5, "x"]},
        "k": {"type": "categorical", "values": ["a", "b"]}}}
    df = pd.DataFrame({"m": pd.Series([1.5, "x"] * 20, dtype=object), "k": ["a", "b"] * 20})
    path, back = _round_trip(df, Dialect(";", ","), tmp_path, doc)
    assert "1,5" in path.read_text()
    assert len(encode(back, load_schema(doc))) == 2


@pytest.mark.parametrize("values,text", [
    (pd.Series([2.5, np.nan, "x", np.float64(3.25)], dtype=object), ["2,5", "", "x", "3,25"]),
    (pd.Categorical([1.5, 2.25, 1.5, 2.25]), ["1,5", "2,25", "1,5", "2,25"])])
def test_pandas_writes_floats_in_the_dialect_too(tmp_path, values, text):
    from gpu_dpsyn.data.ingest import write_table
    path = tmp_path / "p.csv"
    write_table(pd.DataFrame({"v": values}), str(path), dialect=Dialect(";", ","))
    assert path.read_text().splitlines()[1:] == [f'"{t}"' if t == "" else t for t in text] \
        or path.read_text().splitlines()[1:] == text


def test_excels_separator_line_after_a_bom_is_named(tmp_path, capsys):
    data = tmp_path / "x.csv"
    data.write_bytes(b"\xef\xbb\xbfsep=;\r\na;b\r\n1;2\r\n")
    assert main(["infer-schema", str(data), "--out", str(tmp_path / "s.json")]) == 2
    assert "sep=;" in capsys.readouterr().err


def test_a_strict_read_of_bytes_the_encoding_cannot_read_says_how_to_declare_it(tmp_path):
    # "'utf-8' codec can't decode byte 0xce in position 0" named no way out
    data = tmp_path / "l.csv"
    data.write_bytes("Région,n\nÎle,1\n".encode("cp1252"))
    s = load_schema({"columns": {"Région": {"type": "categorical", "values": ["Île"]},
                                 "n": {"type": "numeric", "min": 0, "max": 5}}})
    with pytest.raises(DPSynError, match=r"utf-8.*\"encoding\".*\"csv\""):
        read_table(str(data), schema=s, lenient=False)


@pytest.mark.parametrize("name", ["hz", "iso2022_jp", "iso2022_kr", "utf-7", "idna",
                                  "unicode_escape", "raw_unicode_escape", "punycode"])
def test_encodings_whose_bytes_depend_on_earlier_text_are_refused(name):
    """Under hz, one record's '~{' read every later record as Chinese (one row, dropped):
    neighbouring tables differed by 200 records.  An encoding must read each record's
    bytes alone."""
    with pytest.raises(SchemaError, match="earlier|ASCII as ASCII"):
        load_schema(_columns({"encoding": name}))


@pytest.mark.parametrize("name", ["cp1252", "latin-1", "utf-8-sig", "iso8859_15", "koi8_r",
                                  "mac_roman", "cp437", "shift_jis", "cp932", "euc_jp",
                                  "gb18030", "gbk", "big5", "euc_kr", "cp949", "ascii"])
def test_encodings_that_read_each_record_alone_are_taken(name):
    assert load_schema(_columns({"encoding": name})).csv.encoding


@pytest.mark.parametrize("encoding", ["cp1252", "latin-1"])
def test_a_utf8_mark_read_in_an_8bit_encoding_is_named(tmp_path, encoding):
    """A UTF-8 file with a byte-order mark, read as Windows-1252, failed with "not in the
    schema: ['ï»¿Région']"."""
    from gpu_dpsyn.errors import DataError
    data = tmp_path / "t.csv"
    _table().to_csv(data, index=False, encoding="utf-8-sig")
    s = load_schema(_columns({"encoding": encoding}))
    with pytest.raises(DataError, match="byte-order mark.*utf-8-sig"):
        read_table(str(data), schema=s)


_PIECES = ["1", "23", "456", "7890", ",", ".", " ", "'", "-", "+", "e", "E", "\t", "\x1c",
           "\n", "x", "00"]


@pytest.mark.parametrize("decimal,thousands", [(",", None), (",", " "), (".", ","),
                                               (",", "."), (",", "'")])
def test_numbers_of_ascii_text_read_as_the_values_one_by_one(decimal, thousands):
    """A dialect's numbers (Dialect.number) at C speed for ASCII text give what the
    reading value by value gives: random text of the characters that matter."""
    from gpu_dpsyn.data import dialect as dl
    rng = np.random.default_rng(7)
    vals = [None if rng.random() < 0.05 else
            "".join(rng.choice(_PIECES, rng.integers(0, 5))) for _ in range(3000)]
    vals += ["2 399,80", "-1.234,5", "4,8e-05", " 12,5\n", "1'000'000", "1,234.5"]
    s = pd.Series(vals, dtype=object)
    d = Dialect(";", decimal, thousands, "utf-8")
    fast = d.number(s)
    slow = dl.number_one_by_one(d, s)
    assert fast.tolist() == slow.tolist()
    assert dl.ascii_text(s) is not None  # the fast path was taken
