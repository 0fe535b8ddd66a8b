import json

import numpy as np
import pandas as pd
import pytest

from conftest import FLIGHTS_SCHEMA, cli_files
from gpu_dpsyn.cli import main

COLS = ["month", "carrier", "origin", "distance"]


@pytest.fixture
def files(tmp_path, flights, flights_schema):
    return cli_files(tmp_path, flights, flights_schema, COLS, 5000)


def test_synthesize_then_evaluate(files, capsys):
    tmp, real, schema = files
    out, ledger = tmp / "syn.csv", tmp / "ledger.json"
    rc = main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
               "1e-9", "--out", str(out), "--rows", "3000", "--seed", "4", "--iterations", "5",
               "--ledger", str(ledger), "--quiet"])
    assert rc == 0
    syn = pd.read_csv(out)
    assert len(syn) == 3000 and list(syn.columns) == COLS
    rep = json.loads(ledger.read_text())
    labels = [m["label"] for m in rep["measurements"]]
    assert labels[:4] == ["marginal"] * 4 and labels[4] == "indif"
    assert rep["method"] == "privsyn" and rep["spent_fraction"] == pytest.approx(1)
    assert len(rep["gum_history"]) == 6 + 1  # GUM's 5 iterations, then the polish's fit
    assert "wrote 3,000 synthetic rows" in capsys.readouterr().err
    res = tmp / "tvd.json"
    assert main(["evaluate", str(real), str(out), "--schema", str(schema), "--json", str(res)]) == 0
    printed = capsys.readouterr().out
    assert "mean 2-way TVD" in printed and "mean 3-way TVD" in printed
    tvd = json.loads(res.read_text())
    assert 0 <= tvd["tvd_1way"] < 0.1 and 0 <= tvd["tvd_2way"] < 0.3


def test_dpsyn_method_and_workload(files):
    tmp, real, schema = files
    ledger = tmp / "ledger.json"
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
                 "1e-9", "--out", str(tmp / "o.csv"), "--method", "dpsyn", "--iterations", "2",
                 "--workload", "carrier,origin:4", "--ledger", str(ledger), "--quiet"]) == 0
    ms = json.loads(ledger.read_text())["measurements"]
    assert len(ms) == 10
    share = {tuple(m["columns"]): m["fraction"] for m in ms}
    assert share[("carrier", "origin")] == pytest.approx(4 * share[("month", "carrier")])


def test_clear_errors(files, capsys):
    tmp, real, schema = files
    base = ["synthesize", str(real), "--schema", str(schema), "--out", str(tmp / "o.csv")]
    assert main(base + ["--epsilon", "-1", "--delta", "1e-9"]) == 2
    assert "epsilon must be > 0" in capsys.readouterr().err
    assert main(["synthesize", str(tmp / "none.csv"), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", "x.csv"]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp / "bad.csv"
    pd.read_csv(real).assign(carrier="ZZ").to_csv(bad, index=False)
    assert main(["synthesize", str(bad), "--schema", str(schema), "--epsilon", "1", "--delta",
                 "1e-9", "--out", str(tmp / "o.csv"), "--quiet", "--on-invalid", "error"]) == 2
    assert "outside the schema" in capsys.readouterr().err
    assert not (tmp / "o.csv").exists()
    # evaluate names the table that holds them
    assert main(["evaluate", str(real), str(bad), "--schema", str(schema), "--quiet"]) == 2
    assert "the synthetic table: column 'carrier' has values outside" in capsys.readouterr().err
    assert main(base + ["--epsilon", "1", "--delta", "1e-9", "--workload", "carrier,nope:2"]) == 2
    assert "unknown column" in capsys.readouterr().err
    assert main(base + ["--epsilon", "1", "--delta", "1e-9", "--workload", "carrier:x"]) == 2
    assert "must be a number" in capsys.readouterr().err


def test_infer_schema_command_warns(files, capsys):
    tmp, real, _ = files
    out = tmp / "inferred.json"
    assert main(["infer-schema", str(real), "--out", str(out)]) == 0
    assert "NOT differentially private" in capsys.readouterr().err
    assert set(json.loads(out.read_text())["columns"]) == set(COLS)


def test_bundled_schema_matches_bundled_data(flights):
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.data.schema import load_schema
    full = pd.read_csv(FLIGHTS_SCHEMA.parent / "flights.csv.xz")
    assert len(encode(full, load_schema(FLIGHTS_SCHEMA))) == 14  # hour, minute: derived


def test_ledger_releases_only_the_privacy_report_and_gum_history(files):
    # the ledger is released: nothing data-dependent but noisy results (timings grow
    # with the true row count)
    tmp, real, schema = files
    ledger = tmp / "ledger.json"
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
                 "1e-9", "--out", str(tmp / "o.csv"), "--iterations", "2", "--seed", "1",
                 "--ledger", str(ledger), "--quiet"]) == 0
    rep = json.loads(ledger.read_text())
    assert set(rep) == {"epsilon", "delta", "rho", "conversion", "sensitivity", "mechanism",
                        "spent_fraction", "guarantee", "measurements", "method",
                        "selected_marginals", "gum_history", "neighbouring", "unit_of_privacy",
                        "seeded", "selection", "table"}
    assert rep["table"] == {"file": "o.csv", "rows": len(pd.read_csv(tmp / "o.csv"))}


@pytest.mark.parametrize("value", ["0", "-2"])
def test_bad_sensitivity_is_a_clean_error(files, capsys, value):
    tmp, real, schema = files
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
                 "1e-9", "--out", str(tmp / "o.csv"), "--sensitivity", value, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-dpsyn: error: sensitivity") and err.count("\n") == 1
    assert not (tmp / "o.csv").exists()


def _no_reading(monkeypatch):
    def fail(*a, **k):
        pytest.fail("the input was read before the check")
    monkeypatch.setattr("gpu_dpsyn.cli.commands.read_table", fail)


@pytest.mark.parametrize("cmd,flag", [("synthesize", "--out"), ("synthesize", "--ledger"),
                                      ("evaluate", "--json"), ("evaluate", "--report")])
@pytest.mark.parametrize("where,match", [("nodir/x.out", "not an existing directory"),
                                         (".", "is a directory")])
def test_unusable_output_paths_fail_before_reading_the_input(files, capsys, monkeypatch, cmd,
                                                             flag, where, match):
    tmp, real, schema = files
    args = {"synthesize": ["synthesize", str(real), "--schema", str(schema), "--epsilon", "1",
                           "--delta", "1e-9", "--out", str(tmp / "o.csv"), "--quiet"],
            "evaluate": ["evaluate", str(real), str(real), "--schema", str(schema)]}[cmd]
    args = [x for i, x in enumerate(args) if flag not in args[i - 1:i + 1]]  # drop flag, value
    _no_reading(monkeypatch)
    assert main(args + [flag, str(tmp / where)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gpu-dpsyn: error: {flag} ") and match in err and err.count("\n") == 1


@pytest.mark.parametrize("extra,match", [(["--ledger", "o.csv"], "--out and --ledger name"),
                                         (["--out", "real.csv"], "input file")])
def test_outputs_may_not_overwrite_each_other_or_the_input(files, capsys, monkeypatch, extra,
                                                           match):
    tmp, real, schema = files
    monkeypatch.chdir(tmp)
    _no_reading(monkeypatch)
    out = [] if "--out" in extra else ["--out", "o.csv"]
    assert main(["synthesize", "real.csv", "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--quiet"] + out + extra) == 2
    assert match in capsys.readouterr().err


@pytest.mark.parametrize("name", ["other.csv", "other.parquet"])
def test_out_replaces_an_existing_table_only_when_asked(files, capsys, monkeypatch, name):
    # another table named by mistake (a copy of the private data, say) was replaced
    tmp, real, schema = files
    other = tmp / name
    other.write_bytes(b"id,diagnosis\n1,secret\n")
    base = ["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
            "1e-9", "--out", str(other), "--rows", "50", "--iterations", "2", "--quiet"]
    with monkeypatch.context() as m:
        _no_reading(m)
        assert main(base) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and "--overwrite" in err
    assert other.read_bytes() == b"id,diagnosis\n1,secret\n"
    assert main(base + ["--overwrite"]) == 0  # asked for: replaced
    assert other.read_bytes() != b"id,diagnosis\n1,secret\n"
    empty = tmp / ("empty" + other.suffix)
    empty.write_bytes(b"")  # an empty file holds nothing to lose (mktemp's, say)
    assert main([*base[:-6], str(empty), *base[-5:]]) == 0


@pytest.mark.parametrize("flag,value", [("--epsilon", "0_5"), ("--delta", "1e-9_0"),
                                        ("--epsilon", "abc"), ("--epsilon", "0x1p-1"),
                                        ("--sensitivity", "1_0"), ("--rows", "1_000"),
                                        ("--workload", "month,carrier:1_0"),
                                        ("--epsilon", "\u0661"), ("--rows", "\u0663"),
                                        ("--workload", "month,carrier:"),  # (Arabic digits,
                                        # which float() reads; an empty weight, read as 1)
                                        ("--seed", "1\n2")])  # one line, whatever is given
def test_a_number_not_written_as_one_is_refused_in_one_line(files, capsys, monkeypatch, flag,
                                                            value):
    """Python's float() reads "0_5" as 5: ten times the epsilon meant.  And argparse put
    its usage block before the line saying what was wrong."""
    tmp, real, schema = files
    args = ["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
            "1e-9", "--out", str(tmp / "o.csv"), "--quiet"]
    if flag in args:
        args[args.index(flag) + 1] = value
    else:
        args += [flag, value]
    _no_reading(monkeypatch)
    try:
        rc = main(args)
    except SystemExit as e:  # argparse's own refusal
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and flag in err, err


@pytest.mark.parametrize("args,joined", [
    (["synthesize", "t.csv", "--out", "-o.csv"], "--out=-"),
    (["schema", "s.json", "--set", "b.min=0", "--set", "-a.min=0"], "--set=-"),
    (["check", "t.csv", "--schema"], None)])
def test_a_value_taken_for_an_option_is_told_joined_to_its_own_flag(capsys, args, joined):
    """argparse's 'argument --out: expected one argument' (--out -o.csv) was told
    '(--set=-a.min=0)', another flag's form; and --schema with no value after it too."""
    with pytest.raises(SystemExit):
        main(args)
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    if joined:
        assert f"({joined}" in err and (joined == "--set=-" or "--set" not in err), err
    else:
        assert "starts with '-'" not in err, err


def test_the_suggested_check_command_can_be_pasted(files, capsys, tmp_path):
    """"gpu-dpsyn check sp ace/in put.csv --schema s.json" split the names at the spaces."""
    import shlex
    tmp, real, schema = files
    spaced = tmp_path / "sp ace"
    spaced.mkdir()
    (spaced / "in put.csv").write_bytes(real.read_bytes())
    assert main(["synthesize", str(spaced / "in put.csv"), "--schema", str(schema),
                 "--epsilon", "1", "--delta", "1e-9", "--out", str(tmp / "o.csv"),
                 "--rows", "50", "--iterations", "1", "--quiet"]) == 0
    line = next(x for x in capsys.readouterr().err.splitlines() if "gpu-dpsyn check" in x)
    said = line[line.index("gpu-dpsyn check"):line.index(" lists them")]
    assert shlex.split(said) == ["gpu-dpsyn", "check", str(spaced / "in put.csv"),
                                 "--schema", str(schema)]


def test_the_suggested_check_command_names_a_file_that_starts_with_a_dash(files, capsys,
                                                                        monkeypatch):
    """"gpu-dpsyn check -in.csv --schema s.json" read -in.csv as an option (argparse:
    'the following arguments are required: input'): such a name is written ./-in.csv."""
    import shlex
    from gpu_dpsyn.cli import build_parser
    tmp, real, schema = files
    (tmp / "-in.csv").write_bytes(real.read_bytes())
    (tmp / "-s.json").write_bytes(schema.read_bytes())
    monkeypatch.chdir(tmp)
    assert main(["synthesize", "--schema=-s.json", "--epsilon", "1", "--delta", "1e-9",
                 "--out", "o.csv", "--rows", "50", "--iterations", "1", "--quiet", "--",
                 "-in.csv"]) == 0
    line = next(x for x in capsys.readouterr().err.splitlines() if "gpu-dpsyn check" in x)
    said = line[line.index("gpu-dpsyn check"):line.index(" lists them")]
    a = build_parser().parse_args(shlex.split(said)[1:])
    assert (tmp / a.input).samefile(tmp / "-in.csv")
    assert (tmp / a.schema).samefile(tmp / "-s.json")


def test_synthesize_says_an_individuals_records_are_not_linked(tmp_path, capsys):
    """A claims table's patient_id came out 1..n, one claim each (11,056 patients with up
    to 11 claims in the real table), and nothing said readmissions could not be studied."""
    r = np.random.default_rng(0)
    df = pd.DataFrame({"pid": r.integers(0, 300, 1000), "k": r.choice(["a", "b"], 1000)})
    data, schema = tmp_path / "t.csv", tmp_path / "s.json"
    df.to_csv(data, index=False)
    schema.write_text(json.dumps({"max_records_per_individual": 4, "columns": {
        "pid": {"type": "id"}, "k": {"type": "categorical", "values": ["a", "b"]}}}))
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(tmp_path / "o.csv"), "--rows", "50",
                 "--iterations", "1", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "'pid' is numbered 1..n: each synthetic row is an individual of its own" in err
    # and its counts are those of the bounded table (a probe's orders: 10,126 of 30,000
    # rows past 5 a customer, and "wrote 19,953 synthetic rows" said nothing of it)
    assert "; totals are those of the table with at most 4 records per individual" in err
    assert "rows and totals" not in err  # (--rows 50 set the row count)


def test_bad_rows_fail_before_reading_the_input(files, capsys, monkeypatch):
    tmp, real, schema = files
    base = ["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
            "1e-9", "--out", str(tmp / "o.csv"), "--quiet"]
    _no_reading(monkeypatch)
    assert main(base + ["--rows", "0"]) == 2
    assert "number of rows" in capsys.readouterr().err
    monkeypatch.setattr("gpu_dpsyn.backends.numpy.ops.NumpyBackend.free_memory",
                        lambda self: 2 ** 30)  # 1 GiB free
    assert main(base + ["--rows", str(10 ** 8), "--backend", "cpu"]) == 2
    assert "needs about" in capsys.readouterr().err


def _one_line_error(capsys, *parts):
    err = capsys.readouterr().err
    assert err.startswith("gpu-dpsyn: error: ") and err.count("\n") == 1, err
    assert all(p in err for p in parts), err


@pytest.mark.parametrize("extra,parts", [
    (["--iterations", "-1"], ["iterations must be an integer >= 0, got -1"]),
    (["--seed", "-1"], ["seed must be an integer in [0, 2^64), got -1"]),
    (["--epsilon", "1e300"], ["epsilon must be at most"]),
    (["--selection", "public"], ["--selection public needs a --public table"]),
    (["--prior-tolerance", "-1"], ["prior_tolerance must be a number >= 0"]),
    (["--adaptive-rounds", "-1"], ["adaptive_rounds must be an integer >= 0, got -1"]),
    (["--group-by", " , "], ["--group-by ' , ' names no column"]),
    (["--group-by", "origin,nope"], ["group_by column 'nope' is not a synthesized column"]),
    (["--group-by", "distance"], ["'distance' must be categorical"]),
    (["--group-by", "origin", "--method", "dpsyn"], ["group_by needs method='privsyn'"]),
])
def test_bad_synthesize_parameters_are_one_line_errors(files, capsys, monkeypatch, extra, parts):
    tmp, real, schema = files
    _no_reading(monkeypatch)
    args = ["synthesize", str(real), "--schema", str(schema), "--delta", "1e-9", "--out",
            str(tmp / "o.csv"), "--quiet"]
    eps = [] if "--epsilon" in extra else ["--epsilon", "1"]
    assert main(args + eps + extra) == 2
    _one_line_error(capsys, *parts)


@pytest.mark.parametrize("twice,said", [
    (["--epsilon", "1", "--epsilon", "10"], "--epsilon is given twice (1.0 and 10.0)"),
    (["--epsilon", "1", "--epsilon=10"], "--epsilon is given twice (1.0 and 10.0)"),
    (["--epsilon", "1", "--out", "b.csv"], "--out is given twice ('a.csv' and 'b.csv')"),
])
def test_an_option_given_twice_with_two_values_is_refused(files, capsys, monkeypatch, twice,
                                                          said):
    """--epsilon 1 ... --epsilon 10 ran at 10 (argparse keeps the last), said only in the
    run's last line: a script's default and an override spent ten times the budget."""
    tmp, real, schema = files
    _no_reading(monkeypatch)
    args = ["synthesize", str(real), "--schema", str(schema), "--delta", "1e-9", "--out",
            "a.csv", "--quiet"]
    assert main(args + twice) == 2
    _one_line_error(capsys, said, "give it once")


def test_an_option_given_twice_alike_is_taken(files, monkeypatch):
    from gpu_dpsyn.cli.parser import build_parser
    a = build_parser().parse_args(["synthesize", "t.csv", "--schema", "s.json",
                                   "--epsilon", "1", "--epsilon", "1.0", "--delta", "1e-9",
                                   "--out", "o.csv"])
    assert a.epsilon == 1.0


@pytest.mark.parametrize("value", ["0", "-3"])
def test_evaluate_max_sets_must_be_positive(files, capsys, monkeypatch, value):
    tmp, real, schema = files
    _no_reading(monkeypatch)
    assert main(["evaluate", str(real), str(real), "--schema", str(schema),
                 "--max-sets", value]) == 2
    _one_line_error(capsys, f"--max-sets must be an integer >= 1, got {value}")


def test_evaluate_reads_a_ledger_without_a_report(files, capsys):
    """--ledger without --report was refused as "read only for the HTML report", while
    its private bins are what the scores are counted on (docs/evaluation.md)."""
    tmp, real, schema = files
    ledger, out = tmp / "run.json", tmp / "o.csv"
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(out), "--seed", "0", "--quiet",
                 "--iterations", "2", "--ledger", str(ledger)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(real), str(out), "--schema", str(schema), "--quiet",
                 "--ledger", str(ledger)]) == 0
    assert "mean 2-way TVD" in capsys.readouterr().out
    ledger.write_text("[1]")
    assert main(["evaluate", str(real), str(out), "--schema", str(schema), "--quiet",
                 "--ledger", str(ledger)]) == 2
    _one_line_error(capsys, "is not a gpu_dpsyn privacy ledger")


@pytest.mark.parametrize("cmd", ["synthesize", "public", "evaluate", "infer-schema"])
def test_a_directory_as_input_is_named_as_one(files, capsys, monkeypatch, cmd):
    tmp, real, schema = files
    d = str(tmp)
    args = {"synthesize": ["synthesize", d, "--schema", str(schema), "--epsilon", "1",
                           "--delta", "1e-9", "--out", str(tmp / "o.csv")],
            "public": ["synthesize", str(real), "--schema", str(schema), "--epsilon", "1",
                       "--delta", "1e-9", "--out", str(tmp / "o.csv"), "--public", d],
            "evaluate": ["evaluate", str(real), d, "--schema", str(schema)],
            "infer-schema": ["infer-schema", d, "--out", str(tmp / "s2.json")]}[cmd]
    _no_reading(monkeypatch)
    assert main(args) == 2
    _one_line_error(capsys, f"cannot read {d!r}: it is a directory")


def test_a_directory_given_to_synthesize_points_at_workers(files, capsys, monkeypatch):
    """synthesize --workers reads a directory of parts: a directory given without it says
    so (the other commands read one table file)."""
    tmp, _, schema = files
    _no_reading(monkeypatch)
    assert main(["synthesize", str(tmp), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(tmp / "o.csv")]) == 2
    _one_line_error(capsys, "a directory of parts is read with --workers N or --scheduler")


def test_infer_schema_id_must_name_a_column(files, capsys):
    tmp, real, _ = files
    out = tmp / "inferred.json"
    assert main(["infer-schema", str(real), "--out", str(out), "--id", "carrier",
                 "--id", "nosuch"]) == 2
    _one_line_error(capsys, "--id 'nosuch'", "not a column", "'carrier'")
    assert not out.exists()


def test_infer_schema_with_an_individual_id_asks_for_its_bound(files, capsys):
    # without the bound the fit keeps one record a person: the draft now says so
    tmp, real, _ = files
    out = tmp / "inferred.json"
    assert main(["infer-schema", str(real), "--out", str(out), "--id", "carrier"]) == 0
    err = capsys.readouterr().err
    assert "'carrier' names the individual" in err and "max_records_per_individual" in err
    assert main(["infer-schema", str(real), "--out", str(tmp / "i2.json")]) == 0
    assert "max_records_per_individual" not in capsys.readouterr().err


def test_the_bound_line_gives_its_edit_and_what_it_costs(files, capsys):
    """A curator's bank table drafted with --id customer_id read 'add
    "max_records_per_individual": N to the schema', with neither the command that sets it
    nor what a larger N costs: set to the most records a customer had (30), every
    column's noise swamped it (a 0.3% fraud flag came out at 2.2%)."""
    tmp, real, _ = files
    out = tmp / "my schema.json"
    assert main(["infer-schema", str(real), "--out", str(out), "--id", "carrier"]) == 0
    err = capsys.readouterr().err
    assert f"gpu-dpsyn schema '{out}' --set max_records_per_individual=N" in err
    assert "noise" in err and "dropped at random" in err


def test_the_bound_lines_edit_names_a_schema_that_starts_with_a_dash(files, capsys,
                                                                    monkeypatch):
    """infer-schema --out=-s.json printed 'gpu-dpsyn schema -s.json --set ...', which
    argparse refuses pasted ('the following arguments are required: file'): ./-s.json."""
    import shlex
    from gpu_dpsyn.cli import build_parser
    tmp, real, _ = files
    monkeypatch.chdir(tmp)
    assert main(["infer-schema", str(real), "--out=-s.json", "--id", "carrier"]) == 0
    err = capsys.readouterr().err
    said = err[err.index("gpu-dpsyn schema"):err.index("=N") + 2]
    a = build_parser().parse_args(shlex.split(said)[1:])
    assert (tmp / a.file).samefile(tmp / "-s.json")


def test_warnings_are_printed_as_one_line_each(files, capsys):
    tmp, real, schema = files
    # (eps 0.002: the count's standard error, about 2,500, is past the warning's share of
    # any count the noise gives; at 0.01 it was about 500, and some draws passed under it)
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "0.002",
                 "--delta", "1e-9", "--out", str(tmp / "o.csv"), "--iterations", "1",
                 "--seed", "0", "--quiet"]) == 0
    lines = capsys.readouterr().err.splitlines()
    warn = [x for x in lines if x.startswith("gpu-dpsyn: warning: ")]
    assert any("row count is estimated at" in x and "--rows" in x for x in warn), lines
    assert any("a seed was given" in x for x in warn), lines
    # and the summary lines (the rows written, where check lists the repairs): no source
    # lines echoed
    assert len(lines) == len(warn) + 2


def test_an_unsampleable_row_estimate_is_a_clear_error(files, capsys, monkeypatch):
    """Without --rows the release may be as large as the public maximum the noisy count is
    clamped to: if that cannot be sampled, the run is refused before the table is read."""
    tmp, real, schema = files
    monkeypatch.setattr("gpu_dpsyn.backends.numpy.ops.NumpyBackend.free_memory",
                        lambda self: 2 ** 16)  # 64 KiB: 5,000 estimated rows do not fit
    _no_reading(monkeypatch)
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(tmp / "o.csv"), "--iterations", "1",
                 "--backend", "cpu", "--quiet", "--adaptive-rounds", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-dpsyn: error: without --rows, the release may have up to ") \
        and "--rows N" in err and err.count("\n") == 1, err


def test_version(capsys):
    from importlib.metadata import version
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"gpu-dpsyn {version('gpu_dpsyn')}"


def test_every_argument_of_every_subcommand_has_help():
    import argparse
    from gpu_dpsyn.cli import build_parser
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subs.choices) == {"synthesize", "evaluate", "infer-schema", "schema", "check",
                                 "sample"}
    for name, sub in [("gpu-dpsyn", parser), *subs.choices.items()]:
        for action in sub._actions:
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                assert action.help and action.help.strip(), (name, action.dest)


def test_synthesize_help_says_how_to_choose_epsilon_and_delta(capsys):
    with pytest.raises(SystemExit):
        main(["synthesize", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "choosing epsilon and delta" in text
    assert "well below 1/n" in text and "1e-9 to 1e-6" in text and "0.3-1 is strong" in text


def test_evaluate_terminal_json_and_report_agree(files, capsys, no_raster):
    pytest.importorskip("matplotlib")
    import re
    tmp, real, schema = files
    syn, res, rep = tmp / "syn.csv", tmp / "res.json", tmp / "r.html"
    pd.read_csv(real).sample(frac=1, random_state=1).iloc[:3000].to_csv(syn, index=False)
    assert main(["evaluate", str(real), str(syn), "--schema", str(schema), "--max-sets", "3",
                 "--json", str(res), "--report", str(rep)]) == 0
    out, err = capsys.readouterr()
    three = re.search(r"mean 3-way TVD: (\d\.\d{4}) \(3 random of 4 column triples\)", out)
    assert three, out
    assert "mean 2-way TVD" in out and "(3 random of 6 column pairs)" in out
    got = json.loads(res.read_text())
    assert f"{got['tvd_3way']:.4f}" == three.group(1)
    assert got["sets"]["3way"] == {"evaluated": 3, "of": 4}
    # statistics of the real table, not DP: said on the terminal and in the JSON too, not
    # only in the report (the ML rows' test count alone gives 30% of the real n)
    assert out.startswith("note: ") and "not for publication" in out.splitlines()[0]
    assert got["not_for_publication"] is True
    page = rep.read_text()
    # the report's scores table: the same number over the same triples
    assert f"<td>mean 3-way TVD</td><td>{three.group(1)}</td><td>3 random of 4 column " \
           "triples</td>" in page
    assert "3-way marginals: the 3 evaluated, a random 3 of the 4 column triples" in page
    assert "inferred" not in page.split("<h2>Privacy")[0]  # the schema was given
    assert "2-way marginals" in err and "report figures" in err  # progress bars


def test_evaluate_without_a_schema_reads_the_domain_of_both_tables(files, capsys):
    tmp, real, _ = files
    syn = tmp / "syn.csv"
    pd.read_csv(real).assign(carrier="ZZ").to_csv(syn, index=False)  # not in the real table
    assert main(["evaluate", str(real), str(syn), "--quiet"]) == 0
    assert "mean 1-way TVD" in capsys.readouterr().out


def test_evaluate_without_a_schema_leaves_the_real_tables_ids_out(tmp_path, capsys):
    # drafted from both tables, a real id 0..n-1 beside synthetic 1..n repeats: it was
    # scored as a numeric column (mean 2-way TVD 0.52 against 0.27 with the schema)
    rng = np.random.default_rng(0)
    n = 600
    real, syn = tmp_path / "real.csv", tmp_path / "syn.csv"
    df = pd.DataFrame({"pid": np.arange(n), "a": rng.choice(["x", "y"], n),
                       "b": rng.choice(["u", "v", "w"], n)})
    df.to_csv(real, index=False)
    df.assign(pid=np.arange(1, n + 1)).to_csv(syn, index=False)
    assert main(["evaluate", str(real), str(syn), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mean 1-way TVD: 0.0000 (all 2 columns)" in out, out


def test_evaluate_without_a_schema_leaves_a_numbered_synthetic_id_out(tmp_path, capsys):
    # the real patient_id repeats (4 records a patient), so its draft was numbers; the
    # release numbers its id 1..n: scored as data, 1-way TVD 0.23 against 0.03 with the
    # schema (a curator probe)
    rng = np.random.default_rng(0)
    n = 600
    real, syn = tmp_path / "real.csv", tmp_path / "syn.csv"
    df = pd.DataFrame({"patient_id": 900001 + np.arange(n) // 4,
                       "a": rng.choice(["x", "y"], n), "b": rng.choice(["u", "v", "w"], n)})
    df.to_csv(real, index=False)
    df.assign(patient_id=np.arange(1, n + 1)).to_csv(syn, index=False)
    assert main(["evaluate", str(real), str(syn), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mean 1-way TVD: 0.0000 (all 2 columns)" in out, out
    # a column of 1..n that is no id by its name is scored
    df.rename(columns={"patient_id": "rank"}).to_csv(real, index=False)
    df.assign(patient_id=np.arange(1, n + 1)).rename(columns={"patient_id": "rank"}).to_csv(
        syn, index=False)
    assert main(["evaluate", str(real), str(syn), "--quiet"]) == 0
    assert "(all 3 columns)" in capsys.readouterr().out


def test_evaluate_quiet_draws_no_progress_bars(files, capsys):
    tmp, real, schema = files
    copy = tmp / "copy.csv"
    copy.write_bytes(real.read_bytes())
    assert main(["evaluate", str(real), str(copy), "--schema", str(schema), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_evaluate_refuses_a_file_that_is_no_ledger(files, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    tmp, real, schema = files
    ledger = tmp / "l.json"
    ledger.write_text("[1, 2]")
    _no_reading(monkeypatch)
    assert main(["evaluate", str(real), str(real), "--schema", str(schema), "--report",
                 str(tmp / "r.html"), "--ledger", str(ledger)]) == 2
    _one_line_error(capsys, f"ledger {str(ledger)!r} is not a gpu_dpsyn privacy ledger")


def test_public_selection_and_group_by_levels(files, tmp_path):
    tmp, real, schema = files
    public = tmp / "public.csv"
    pd.read_csv(real).iloc[:1500].to_csv(public, index=False)
    ledger = tmp / "ledger.json"
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
                 "1e-9", "--out", str(tmp / "o.csv"), "--seed", "1", "--iterations", "3",
                 "--public", str(public), "--group-by", "origin", "--group-by", "carrier",
                 "--ledger", str(ledger), "--quiet"]) == 0
    rep = json.loads(ledger.read_text())
    assert "indif" not in [m["label"] for m in rep["measurements"]]
    assert rep["group_by"] == [["origin"], ["carrier"]] and rep["selection"].startswith("public")
    assert {m["columns"][-1] for m in rep["measurements"]} == {"origin", "carrier x origin"}
    out = pd.read_csv(tmp / "o.csv")
    assert set(out.origin) <= {"EWR", "JFK", "LGA"} and len(out) > 4000


@pytest.mark.parametrize("attr,flag,want", [("neighbour_shuffle", [], True),
                                             ("neighbour_shuffle", ["--no-neighbour-shuffle"], False),
                                             ("gibbs_sweep", [], True),
                                             ("gibbs_sweep", ["--no-gibbs-sweep"], False),
                                             ("polish", [], True),
                                             ("polish", ["--no-polish"], False),
                                             ("denoise", [], True),
                                             ("denoise", ["--no-denoise"], False)])
def test_post_processing_flags_reach_the_synthesizer(files, monkeypatch, attr, flag, want):
    tmp, real, schema = files
    from gpu_dpsyn import synthesizer as api
    seen = []
    real_init = api.Synthesizer.__init__

    def spy(self, *a, **k):
        real_init(self, *a, **k)
        seen.append(getattr(self.settings, attr))
    monkeypatch.setattr(api.Synthesizer, "__init__", spy)
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(tmp / "o.csv"), "--iterations", "1",
                 "--backend", "cpu", "--quiet", "--adaptive-rounds", "0", "--rows", "200",
                 *flag]) == 0
    assert seen == [want]


@pytest.mark.parametrize("text, word, csv", [
    ("a;b\n1;2\n3;4\n", "semicolons", {"separator": ";"}),
    ("a;b\n1,5;2,3\n3,1;4,2\n", "semicolons", {"separator": ";", "decimal": ","}),
    ("a\tb\n1\t2\n", "tabs", {"separator": "\t"})])
def test_a_file_separated_otherwise_than_by_commas_is_drafted_so(tmp_path, capsys, text,
                                                                 word, csv):
    # (refused before: "save it with commas first"; synthesize still refuses such a file
    # where the schema does not say so: tests/test_dialect.py)
    path, out = tmp_path / "t.csv", tmp_path / "s.json"
    path.write_text(text)
    assert main(["infer-schema", str(path), "--out", str(out)]) == 0
    assert word in capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["csv"] == csv and sorted(doc["columns"]) == ["a", "b"]


def test_evaluating_a_file_against_itself_warns(files, capsys):
    tmp, real, schema = files
    same = tmp / "same.csv"
    same.symlink_to(real)
    assert main(["evaluate", str(real), str(same), "--schema", str(schema), "--quiet"]) == 0
    assert "one file" in capsys.readouterr().err


def test_a_key_of_another_column_type_says_to_change_the_type(tmp_path, capsys):
    s = tmp_path / "s.json"
    s.write_text('{"columns": {"age": {"type": "categorical", "values": [20, 30]}}}')
    assert main(["schema", str(s), "--set", "age.max=120"]) == 2
    err = capsys.readouterr().err
    assert "'max' is a key of a numeric or datetime column" in err and '"type"' in err
    assert main(["schema", str(s), "--set", "age.type=numeric", "--set", "age.min=0",
                 "--set", "age.max=120"]) == 0  # (the categorical's values go with it)


def test_evaluate_without_a_schema_reads_a_parquet_table_as_its_csv_text(tmp_path, capsys):
    """No --schema: both tables are read as text, a Parquet one as the CSV pandas writes of
    it, so a Parquet real table (zone-aware timestamps, floats, missing values) scores
    against its own CSV at 0 (its Timestamps beside the CSV's text were refused)."""
    n = 240
    t = pd.date_range("2020-01-01", periods=30, freq="D", tz="Europe/Paris")
    df = pd.DataFrame({"t": np.tile(t, n // 30), "a": np.arange(n) % 5,
                       "x": np.where(np.arange(n) % 7 == 0, np.nan, np.arange(n) % 4 / 2)})
    df.to_parquet(tmp_path / "real.parquet")
    df.sample(frac=1, random_state=0).to_csv(tmp_path / "syn.csv", index=False)
    assert main(["evaluate", str(tmp_path / "real.parquet"), str(tmp_path / "syn.csv"),
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mean 1-way TVD: 0.0000 (all 3 columns)" in out
    assert "mean 3-way TVD: 0.0000" in out


def test_infer_schema_names_a_blank_header_cell(tmp_path, capsys):
    """A CSV saved with pandas' row index (a blank first header cell) drafts that index
    as a column 'Unnamed: 0': the summary says where the name came from."""
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": np.arange(60) % 5, "b": np.arange(60) % 3}).to_csv(path)
    assert main(["infer-schema", str(path), "--out", str(tmp_path / "s.json")]) == 0
    err = capsys.readouterr().err  # the draft's summary goes with its warnings
    note = [x for x in err.splitlines() if "'Unnamed: 0'" in x and "blank" in x]
    assert len(note) == 1 and "index" in note[0]
    pd.DataFrame({"a": np.arange(60) % 5}).to_csv(path, index=False)
    assert main(["infer-schema", str(path), "--out", str(tmp_path / "s2.json")]) == 0
    assert "blank" not in capsys.readouterr().err


def test_evaluate_says_when_the_schema_repairs_every_real_row_away(tmp_path, capsys):
    schema = tmp_path / "s.json"
    schema.write_text('{"columns": {"k": {"type": "categorical", "values": ["a", "b"]}}}')
    real, syn = tmp_path / "real.csv", tmp_path / "syn.csv"
    pd.DataFrame({"k": ["A", "B"] * 20}).to_csv(real, index=False)
    pd.DataFrame({"k": ["a", "b"] * 20}).to_csv(syn, index=False)
    assert main(["evaluate", str(real), str(syn), "--schema", str(schema), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "40 rows" in err and "gpu-dpsyn check" in err


def test_infer_schema_hints_at_a_person_id_it_did_not_draft_as_one(tmp_path, capsys):
    """A column named like an identifier whose values repeat (several records per
    person) is drafted as data: its line says to give --id if it names a person, and the
    last line no longer says that a guessed row numbering names the individual alone."""
    path = tmp_path / "t.csv"
    n = 400
    pd.DataFrame({"respondent_id": np.arange(n) // 4, "k": np.arange(n) % 3}).to_csv(path)
    assert main(["infer-schema", str(path), "--out", str(tmp_path / "s.json")]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.strip().startswith("respondent_id"))
    assert "--id respondent_id" in line
    k_line = next(x for x in err.splitlines() if x.strip().startswith("k "))
    assert "--id" not in k_line
    # (the file keeps pandas' row index, the id guessed: its last line says it names
    # records, not people)
    assert "saved row index" in err.splitlines()[-1] and "--id" in err.splitlines()[-1]
    assert main(["infer-schema", str(path), "--out", str(tmp_path / "s2.json"),
                 "--id", "respondent_id"]) == 0
    err = capsys.readouterr().err
    assert "--id respondent_id" not in err and "guessed" not in err.splitlines()[-1]


@pytest.mark.parametrize("values", [["$1,814.50", "-$801.27", "$12.00", "$3,200.10"],
                                    ["45%", "26.2%", "3%", "100%"],
                                    ["1.234,56 €", "12,50 €", "3.001,00 €", "7,25 €"]])
def test_infer_schema_hints_at_numbers_written_with_signs(tmp_path, capsys, values):
    path = tmp_path / "t.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"x": [v.replace("1", str(d)) for v, d in
                        zip(values * 60, rng.integers(1, 10, 240))],
                  "k": np.arange(240) % 3}).to_csv(path, index=False)
    assert main(["infer-schema", str(path), "--out", str(tmp_path / "s.json")]) == 0
    line = next(x for x in capsys.readouterr().err.splitlines()
                if x.strip().startswith("x "))
    assert "plain numbers" in line


def test_infer_schema_reads_a_file_that_is_no_utf8_in_its_encoding(tmp_path, capsys):
    """A latin-1 file's accented letters read as U+FFFD (the row-local rule): the draft
    listed "Jos\\ufffd" without a word; then it said to save the file as UTF-8; now it
    reads the file as Windows-1252 and says so (data/draft_dialect.py)."""
    path = tmp_path / "t.csv"
    path.write_bytes(b"city,k\n" + b"Jos\xe9,1\nZ\xfcrich,2\nBern,1\n" * 20)
    assert main(["infer-schema", str(path), "--out", str(tmp_path / "s.json")]) == 0
    err = capsys.readouterr().err
    assert "no UTF-8" in err and "cp1252" in err
    doc = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert doc["csv"] == {"encoding": "cp1252"}
    assert doc["columns"]["city"]["values"] == ["Bern", "José", "Zürich"]
    # a wrong --encoding: the bytes it cannot read are named, column by column
    assert main(["infer-schema", str(path), "--out", str(tmp_path / "s3.json"),
                 "--encoding", "utf-8"]) == 0
    err = capsys.readouterr().err
    assert "utf-8 cannot read" in err and "'city'" in err and "'k'" not in err
    good = tmp_path / "u.csv"
    good.write_text("city,k\n" + "José,1\nZürich,2\n" * 20, encoding="utf-8")
    assert main(["infer-schema", str(good), "--out", str(tmp_path / "s2.json")]) == 0
    assert "UTF-8" not in capsys.readouterr().err


def test_synthesize_says_where_the_rows_it_repaired_or_dropped_are_listed(files, capsys):
    # a schema that drops most rows wrote "wrote 732 synthetic rows" and nothing else;
    # the line is the same whatever the table holds (it says nothing of it)
    tmp, real, schema = files
    out = tmp / "o.csv"
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(out), "--quiet", "--seed", "0"]) == 0
    err = capsys.readouterr().err
    assert f"gpu-dpsyn check {real} --schema {schema}" in err
    # a clean table too: the line must not read as if values were repaired
    assert "whether or not there were any" in err and "were repaired" not in err
