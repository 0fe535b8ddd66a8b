"""Nothing lost: every output is checked before anything is read (it is a file, not an input,
not another output: compared as files, so hard links count) and written whole or not at
all (a temporary file beside it, then a rename)."""
import errno
import json
import os

import pandas as pd
import pytest

from conftest import cli_files, no_reading, one_line_error, small_table
from gpu_dpsyn.cli import main
from gpu_dpsyn.data import csv_text
from gpu_dpsyn.data.ingest import write_table
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DPSynError

COLS = ["month", "carrier", "origin"]


@pytest.fixture
def files(tmp_path, flights, flights_schema):
    return cli_files(tmp_path, flights, flights_schema, COLS, 2000)


def _synth(real, schema, out, *extra):
    return ["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
            "1e-9", "--out", str(out), "--quiet", *extra]


def _earlier_release(files, capsys):
    """An earlier run's table and ledger on disk, and the arguments that wrote them (with
    --overwrite): (tmp, out, ledger, args, table bytes, ledger bytes)."""
    tmp, real, schema = files
    out, ledger = tmp / "o.csv", tmp / "l.json"
    args = _synth(real, schema, out, "--rows", "50", "--iterations", "1", "--overwrite",
                  "--ledger", str(ledger))
    assert main(args) == 0
    capsys.readouterr()
    return tmp, out, ledger, args, out.read_bytes(), ledger.read_bytes()


def _replace_fails(monkeypatch, name: str, code: int, text: str) -> None:
    """os.replace fails with OSError(code, text) for a destination ending in `name`."""
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith(name):
            raise OSError(code, text)
        return real_replace(src, dst)
    monkeypatch.setattr(os, "replace", replace)


def _leftovers(d):
    return sorted(p.name for p in d.iterdir() if p.name.startswith("."))


# -- hard links and other names of one file -------------------------------------------------
def test_synthesize_out_hard_linked_to_the_input_is_refused(files, capsys, monkeypatch):
    tmp, real, schema = files
    before = real.read_bytes()
    link = tmp / "link.csv"
    os.link(real, link)
    no_reading(monkeypatch)
    assert main(_synth(real, schema, link)) == 2
    one_line_error(capsys, "--out", "input")
    assert real.read_bytes() == before


def test_evaluate_json_hard_linked_to_the_real_table_is_refused(files, capsys, monkeypatch):
    tmp, real, schema = files
    link = tmp / "link.json"
    os.link(real, link)
    no_reading(monkeypatch)
    assert main(["evaluate", str(real), str(real), "--schema", str(schema), "--json",
                 str(link)]) == 2
    one_line_error(capsys, "--json", "input")


def test_infer_schema_out_hard_linked_to_the_input_is_refused(files, capsys, monkeypatch):
    tmp, real, _ = files
    before = real.read_bytes()
    link = tmp / "s.json"
    os.link(real, link)
    no_reading(monkeypatch)
    assert main(["infer-schema", str(real), "--out", str(link)]) == 2
    one_line_error(capsys, "--out", "input")
    assert real.read_bytes() == before


def test_ledger_hard_linked_to_out_is_refused(files, capsys, monkeypatch):
    tmp, real, schema = files
    out, ledger = tmp / "o.csv", tmp / "l.json"
    out.write_text("earlier\n")
    os.link(out, ledger)
    no_reading(monkeypatch)
    assert main(_synth(real, schema, out, "--ledger", str(ledger))) == 2
    one_line_error(capsys, "--out and --ledger name the same file")


def test_ledger_hard_linked_to_the_schema_is_refused(files, capsys, monkeypatch):
    tmp, real, schema = files
    ledger = tmp / "l.json"
    os.link(schema, ledger)
    no_reading(monkeypatch)
    assert main(_synth(real, schema, tmp / "o.csv", "--ledger", str(ledger))) == 2
    one_line_error(capsys, "--ledger", "input")


@pytest.mark.parametrize("how", ["same", "hardlink"])
def test_dask_ledger_that_is_the_input_is_refused(files, capsys, monkeypatch, how):
    tmp, real, schema = files
    before = real.read_bytes()
    ledger = real
    if how == "hardlink":
        ledger = tmp / "l.json"
        os.link(real, ledger)

    def no_cluster(*a, **k):
        pytest.fail("a cluster was started before the check")
    monkeypatch.setattr("gpu_dpsyn.distributed.cluster.dask_client", no_cluster)
    assert main(_synth(real, schema, tmp / "parts", "--workers", "1", "--ledger",
                       str(ledger))) == 2
    one_line_error(capsys, "--ledger", "input")
    assert real.read_bytes() == before


def test_dask_ledger_hard_linked_inside_out_is_refused(files, capsys, monkeypatch):
    tmp, real, schema = files
    parts = tmp / "parts"
    parts.mkdir()
    alias = tmp / "alias"
    os.symlink(parts, alias)
    assert main(_synth(real, schema, parts, "--workers", "1", "--ledger",
                       str(alias / "l.json"))) == 2
    one_line_error(capsys, "--ledger", "inside --out")


# -- outputs that cannot take a new file --------------------------------------------------
@pytest.mark.parametrize("flag", ["--out", "--ledger"])
def test_a_character_device_is_refused_before_reading(files, capsys, monkeypatch, flag):
    tmp, real, schema = files
    no_reading(monkeypatch)
    args = _synth(real, schema, tmp / "o.csv") if flag == "--ledger" else \
        _synth(real, schema, "/dev/full")
    if flag == "--ledger":
        args += ["--ledger", "/dev/full"]
    assert main(args) == 2
    one_line_error(capsys, flag, "/dev/full", "not a regular file")


def test_a_fifo_is_refused_before_reading(files, capsys, monkeypatch):
    tmp, real, schema = files
    fifo = tmp / "pipe.csv"
    os.mkfifo(fifo)
    no_reading(monkeypatch)
    assert main(_synth(real, schema, fifo)) == 2
    one_line_error(capsys, "--out", "not a regular file")


def test_a_dangling_symlink_is_refused_before_reading(files, capsys, monkeypatch):
    tmp, real, schema = files
    link = tmp / "o.csv"
    os.symlink(tmp / "nowhere" / "x.csv", link)
    no_reading(monkeypatch)
    assert main(_synth(real, schema, link)) == 2
    one_line_error(capsys, "--out", "dangling")


def test_a_directory_that_refuses_new_files_is_found_by_a_probe(files, capsys, monkeypatch):
    """The probe creates (and removes) a file beside the output: os.access alone says yes
    to root, and to a read-only mount."""
    tmp, real, schema = files
    real_open = os.open

    def refuse(path, flags, *a, **k):
        if flags & os.O_CREAT and os.path.dirname(os.fspath(path)) == str(tmp / "ro"):
            raise OSError(errno.EROFS, "Read-only file system", os.fspath(path))
        return real_open(path, flags, *a, **k)
    (tmp / "ro").mkdir()
    monkeypatch.setattr(os, "open", refuse)
    no_reading(monkeypatch)
    assert main(_synth(real, schema, tmp / "ro" / "o.csv")) == 2
    one_line_error(capsys, "--out", "Read-only file system")
    assert list((tmp / "ro").iterdir()) == []


def test_the_probe_leaves_nothing_behind(tmp_path):
    from gpu_dpsyn.data import files as outfiles
    outfiles.check_output(tmp_path / "o.csv", "--out")
    assert list(tmp_path.iterdir()) == []


def test_a_symlink_to_a_file_is_written_through(tmp_path):
    target = tmp_path / "target.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    os.symlink(target, link)
    write_table(pd.DataFrame({"a": [1, 2]}), link)
    assert link.is_symlink() and pd.read_csv(target)["a"].tolist() == [1, 2]


# -- written whole or not at all ----------------------------------------------------------
def _failing_to_csv(monkeypatch, exc):
    """Both CSV writers (pandas', and csv_text's for the kinds it formats) write half a
    table, then fail."""
    real = pd.DataFrame.to_csv

    def half(self, path_or_buf, *a, **k):
        if hasattr(path_or_buf, "write"):  # write_table hands pandas its own stream
            path_or_buf.write(b"a,b\n1,")
        else:
            with open(path_or_buf, "w") as f:
                f.write("a,b\n1,")
        raise exc

    def half_text(df, fmts, stream, *dialect):
        stream.write(b"a,b\n1,")
        raise exc
    monkeypatch.setattr(pd.DataFrame, "to_csv", half)
    monkeypatch.setattr(csv_text, "write_csv", half_text)
    return real


def test_a_full_disk_keeps_the_earlier_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    out = tmp_path / "o.csv"
    out.write_text("earlier output\n")
    _failing_to_csv(monkeypatch, OSError(errno.ENOSPC, "No space left on device"))
    with pytest.raises(DPSynError, match=r"cannot write .*o\.csv.*No space left on device"):
        write_table(pd.DataFrame({"a": [1]}), out)
    assert out.read_text() == "earlier output\n"
    assert _leftovers(tmp_path) == []


def test_ctrl_c_while_writing_keeps_the_earlier_file(tmp_path, monkeypatch):
    out = tmp_path / "o.csv"
    out.write_text("earlier output\n")
    _failing_to_csv(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        write_table(pd.DataFrame({"a": [1]}), out)
    assert out.read_text() == "earlier output\n"
    assert _leftovers(tmp_path) == []


def test_write_table_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    out = tmp_path / "o.csv"
    out.write_text("x\n")
    os.chmod(out, 0o640)
    write_table(pd.DataFrame({"a": [1]}), out)
    assert (os.stat(out).st_mode & 0o777) == 0o640


def test_a_zip_output_names_its_member_after_the_table(tmp_path):
    import zipfile
    out = tmp_path / "syn.csv.zip"
    write_table(pd.DataFrame({"a": [1, 2]}), out)
    assert zipfile.ZipFile(out).namelist() == ["syn.csv"]
    assert pd.read_csv(out)["a"].tolist() == [1, 2]


def test_write_table_into_a_missing_directory_is_a_dpsyn_error(tmp_path):
    with pytest.raises(DPSynError, match="nodir"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "nodir" / "o.csv")


def test_schema_save_is_whole_or_nothing(tmp_path, monkeypatch):
    out = tmp_path / "s.json"
    out.write_text("earlier\n")
    s = load_schema({"columns": {"a": {"type": "categorical", "values": ["x", "y"]}}})

    def boom(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        s.save(out)
    assert out.read_text() == "earlier\n" and _leftovers(tmp_path) == []


def test_a_failed_table_write_after_the_fit_is_one_line_and_keeps_the_old_output(
        files, capsys, monkeypatch):
    tmp, real, schema = files
    out, ledger = tmp / "o.csv", tmp / "l.json"
    out.write_text("earlier output\n")
    ledger.write_text('{"guarantee": "an earlier ledger"}\n')
    _failing_to_csv(monkeypatch, OSError(errno.ENOSPC, "No space left on device"))
    assert main(_synth(real, schema, out, "--rows", "100", "--iterations", "1", "--overwrite",
                       "--adaptive-rounds", "0", "--ledger", str(ledger))) == 2
    one_line_error(capsys, "--out", "No space left on device")
    assert out.read_text() == "earlier output\n"  # and its ledger, kept beside it:
    assert ledger.read_text() == '{"guarantee": "an earlier ledger"}\n'
    spent = json.loads((tmp / "l.failed.json").read_text())  # the spend, recorded anyway
    assert "measurements" in spent and _leftovers(tmp) == []


def test_evaluate_json_failure_keeps_the_earlier_file(files, capsys, monkeypatch):
    tmp, real, schema = files
    res = tmp / "res.json"
    res.write_text('{"not_for_publication": true, "earlier": 1}\n')
    _replace_fails(monkeypatch, "res.json", errno.ENOSPC, "No space left on device")
    assert main(["evaluate", str(real), str(real), "--schema", str(schema), "--json",
                 str(res), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--json" in err and "No space left on device" in err and \
        err.count("gpu-dpsyn: error") == 1
    assert res.read_text() == '{"not_for_publication": true, "earlier": 1}\n' and \
        _leftovers(tmp) == []


@pytest.mark.parametrize("exists", [True, False])
def test_the_dask_output_directory_is_probed(tmp_path, monkeypatch, exists):
    from gpu_dpsyn.distributed.sampling import check_output_dir
    parts = tmp_path / "parts"
    if exists:
        parts.mkdir()
    real_open = os.open

    def refuse(path, flags, *a, **k):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, "Read-only file system", os.fspath(path))
        return real_open(path, flags, *a, **k)
    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(DPSynError, match="Read-only file system"):
        check_output_dir(parts)
    assert list(tmp_path.iterdir()) == ([parts] if exists else [])
    if exists:
        assert list(parts.iterdir()) == []


def test_a_column_parquet_cannot_store_is_named_not_a_pyarrow_traceback(tmp_path):
    import warnings
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.ingest import write_table
    from gpu_dpsyn.errors import DataError, DPSynError
    with pytest.raises(DataError, match=r"column 'c' cannot be stored .*\"dtype\": \"string\""):
        write_table(pd.DataFrame({"ok": [1, 2], "c": [1, "a"]}), tmp_path / "x.parquet")
    assert not (tmp_path / "x.parquet").exists()
    schema = {"columns": {"c": {"type": "categorical", "values": [1, "a"]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        syn = Synthesizer(1.0, 1e-9, seed=0, progress=False).fit(
            pd.DataFrame({"c": [1, "a"] * 50}), schema)
    with pytest.raises(DPSynError, match="sample_to .*column 'c' mixes text and numbers"):
        syn.sample_to(tmp_path / "parts", 100)
    assert not (tmp_path / "parts").exists() or not any((tmp_path / "parts").iterdir())


# -- an output replaces an earlier output of its kind, never another file ----------------
@pytest.mark.parametrize("command", ["schema", "infer-schema", "ledger", "json", "report",
                                     "ledger-dask"])
def test_an_output_never_replaces_a_file_of_another_kind(files, capsys, monkeypatch, command):
    # `schema s.json --set ... --out small.csv` wrote JSON over a data table
    tmp, real, schema = files
    other = tmp / "other.csv"  # the curator's data, not this run's input
    other.write_text("a,b\n1,2\n")
    flag, args = {
        "schema": ("--out", ["schema", str(schema), "--set", "month.nullable=true"]),
        "infer-schema": ("--out", ["infer-schema", str(real)]),
        "ledger": ("--ledger", _synth(real, schema, tmp / "o.csv")),
        "json": ("--json", ["evaluate", str(real), str(real), "--schema", str(schema)]),
        "report": ("--report", ["evaluate", str(real), str(real), "--schema", str(schema)]),
        "ledger-dask": ("--ledger", _synth(real, schema, tmp / "parts") + ["--workers", "1"]),
    }[command]
    no_reading(monkeypatch)
    monkeypatch.setattr("gpu_dpsyn.distributed.reading.read_partitioned",
                        lambda *a, **k: pytest.fail("the input was read before the check"))
    assert main(args + [flag, str(other)]) == 2
    one_line_error(capsys, flag, "other.csv", "no ")
    assert other.read_text() == "a,b\n1,2\n"


def test_outputs_replace_earlier_outputs_of_their_kind(files, tmp_path):
    tmp, real, schema = files
    ledger, out = tmp / "l.json", tmp / "o.csv"
    ledger.write_text('{"guarantee": "earlier"}\n')
    assert main(_synth(real, schema, out, "--rows", "50", "--iterations", "1", "--overwrite",
                       "--ledger", str(ledger))) == 0
    assert "earlier" not in ledger.read_text()
    edited = tmp / "edited.json"  # an earlier edit of the schema
    edited.write_text('  {"columns": {"month": {"type": "numeric"}}}\n')
    assert main(["schema", str(schema), "--set", "month.nullable=true",
                 "--out", str(edited)]) == 0
    assert '"nullable": true' in edited.read_text()


def test_infer_schema_keeps_a_reviewed_schema_and_replaces_a_draft(files, capsys):
    tmp, real, schema = files
    before = schema.read_text()  # written by hand: nothing left to review
    assert main(["infer-schema", str(real), "--out", str(schema)]) == 2
    one_line_error(capsys, "--out", "reviewed")
    assert schema.read_text() == before
    draft = tmp / "draft.json"
    assert main(["infer-schema", str(real), "--out", str(draft)]) == 0
    doc = json.loads(draft.read_text())
    assert doc["_drafted_from_data"]  # still a draft: a second run replaces it
    draft.write_text(json.dumps({**doc, "max_rows": 5}))
    assert main(["infer-schema", str(real), "--out", str(draft)]) == 0
    assert "max_rows" not in json.loads(draft.read_text())


def test_infer_schema_keeps_a_schema_it_cannot_read(files, capsys):
    # a hand-written schema with a syntax error is still the user's work
    tmp, real, _ = files
    typo = tmp / "typo.json"
    typo.write_text('{"columns": {"a": {"type": "categorical",}}}\n')
    assert main(["infer-schema", str(real), "--out", str(typo)]) == 2
    one_line_error(capsys, "--out", "typo.json")
    assert typo.read_text() == '{"columns": {"a": {"type": "categorical",}}}\n'
    # nor one written in Latin-1 (no UTF-8): refused, and kept byte for byte
    latin = tmp / "latin.json"
    latin.write_bytes('{"columns": {"a": {"type": "numeric", "min": 0, "max": 9, '
                      '"description": "café"}}}\n'.encode("latin-1"))
    was = latin.read_bytes()
    assert main(["infer-schema", str(real), "--out", str(latin)]) == 2
    one_line_error(capsys, "--out", "latin.json")
    assert latin.read_bytes() == was


def test_a_model_is_saved_over_a_model_but_not_over_a_table(tmp_path):
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.saving import ModelFileError
    from conftest import small_table
    df, schema = small_table(200)
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False, iterations=1,
                      adaptive_rounds=0).fit(df, schema)
    table = tmp_path / "data.csv"
    table.write_text("a,b\n1,2\n")
    with pytest.raises(ModelFileError, match="no gpu_dpsyn model"):
        syn.save(table)
    assert table.read_text() == "a,b\n1,2\n"
    other = tmp_path / "frame.pkl"  # a pickle, but not a model
    df.to_pickle(other)
    before = other.read_bytes()
    with pytest.raises(ModelFileError, match="no gpu_dpsyn model"):
        syn.save(other)
    assert other.read_bytes() == before
    model = tmp_path / "m.pkl"
    syn.save(model)
    syn.save(model)  # an earlier model is replaced


@pytest.mark.parametrize("where, fails, extra", [
    ("memory", "gpu_dpsyn.cli.sampling.write_table", []),
    ("memory", "gpu_dpsyn.synthesizer.Synthesizer.sample", []),
    ("dask", "gpu_dpsyn.synthesizer.Synthesizer.sample_to", ["--workers", "1"])])
def test_the_ledger_is_written_when_the_table_cannot_be(files, capsys, monkeypatch, where,
                                                        fails, extra):
    # the budget is spent by then: its record must not be lost with the table
    tmp, real, schema = files
    out, ledger = tmp / ("o.csv" if where == "memory" else "parts"), tmp / "l.json"

    def full(*a, **k):
        raise DPSynError(f"cannot write {out}: No space left on device")
    monkeypatch.setattr(fails, full)
    assert main(_synth(real, schema, out, "--rows", "50", "--iterations", "1", *extra,
                       "--ledger", str(ledger))) == 2
    one_line_error(capsys, "No space left")
    assert "measurements" in json.loads(ledger.read_text())


def test_a_ledger_that_cannot_be_written_leaves_the_earlier_table_and_says_so(
        files, capsys, monkeypatch):
    """The ledger was written after the table: with its disk full, the new table stood
    beside the earlier run's ledger (a pair that does not match), and the error did not
    say the budget was spent.  Now the ledger is written first, the table takes its name
    only after it, and the one line says the budget went."""
    tmp, out, ledger, args, table, first = _earlier_release(files, capsys)
    import gpu_dpsyn.cli.paths as paths
    real_write = paths.write_text

    def full(path, text, flag=None):
        if str(path) == str(ledger):
            raise DPSynError(f"cannot write --ledger {str(path)!r}: No space left on device")
        return real_write(path, text, flag)
    monkeypatch.setattr(paths, "write_text", full)
    assert main(args[:5] + ["10"] + args[6:]) == 2  # epsilon 10 this time
    err = "".join(x for x in capsys.readouterr().err.splitlines(keepends=True)
                  if not x.startswith("gpu-dpsyn: warning: "))
    assert out.read_bytes() == table and ledger.read_bytes() == first  # the pair as it was
    assert "No space left" in err and "l.failed.json" in err and err.count("\n") == 1
    assert json.loads((tmp / "l.failed.json").read_text())["epsilon"] == 10


def test_a_ledger_records_the_table_it_goes_with(files):
    tmp, real, schema = files
    out, ledger = tmp / "o.csv", tmp / "l.json"
    assert main(_synth(real, schema, out, "--rows", "50", "--iterations", "1",
                       "--ledger", str(ledger))) == 0
    assert json.loads(ledger.read_text())["table"] == {"file": "o.csv", "rows": 50}


def test_a_second_run_replaces_an_earlier_ledger_only_when_asked(files, capsys, monkeypatch):
    # its table (a.csv) stayed on disk with no ledger, and nothing said so
    tmp, real, schema = files
    ledger = tmp / "l.json"
    assert main(_synth(real, schema, tmp / "a.csv", "--rows", "50", "--iterations", "1",
                       "--ledger", str(ledger))) == 0
    first = ledger.read_bytes()
    capsys.readouterr()
    second = _synth(real, schema, tmp / "b.csv", "--rows", "50", "--iterations", "1",
                    "--ledger", str(ledger))
    assert main(second) == 2
    err = capsys.readouterr().err
    assert "--ledger" in err and "--overwrite" in err and err.count("\n") == 1
    assert ledger.read_bytes() == first and not (tmp / "b.csv").exists()
    assert main(second + ["--overwrite"]) == 0
    assert json.loads(ledger.read_text())["table"]["file"] == "b.csv"


def test_when_the_table_and_the_ledger_both_fail_both_are_named(files, capsys, monkeypatch):
    tmp, real, schema = files
    out, ledger = tmp / "o.csv", tmp / "l.json"

    def full(path):
        raise DPSynError(f"cannot write {path}: No space left on device")
    monkeypatch.setattr("gpu_dpsyn.cli.sampling.write_table",
                        lambda df, path, *a, **k: full(path))
    monkeypatch.setattr("gpu_dpsyn.cli.paths.write_text", lambda path, *a: full(path))
    assert main(_synth(real, schema, out, "--rows", "50", "--iterations", "1",
                       "--ledger", str(ledger))) == 2
    err = capsys.readouterr().err
    assert "o.csv" in err and "l.json" in err and err.count("gpu-dpsyn: error:") == 1, err


# -- a JSON output replaces only an earlier output of its own kind ---------------------------
@pytest.mark.parametrize("command", ["ledger", "json"])
def test_a_json_output_never_replaces_a_schema(files, capsys, monkeypatch, command):
    # any JSON document counted as "an earlier output": a reviewed schema named as the
    # ledger, or as evaluate's --json (then holding the real table's statistics), was lost
    tmp, real, schema = files
    reviewed = tmp / "reviewed.json"
    reviewed.write_text(schema.read_text())
    flag, args = {"ledger": ("--ledger", _synth(real, schema, tmp / "o.csv")),
                  "json": ("--json", ["evaluate", str(real), str(real), "--schema",
                                      str(schema)])}[command]
    no_reading(monkeypatch)
    assert main(args + [flag, str(reviewed)]) == 2
    one_line_error(capsys, flag, "reviewed.json")
    assert reviewed.read_text() == schema.read_text()


def test_a_symlinked_output_of_another_format_is_refused(files, capsys, monkeypatch):
    # --out lnk.parquet -> tgt.csv wrote Parquet bytes into tgt.csv; --out lnk.csv ->
    # schema.json replaced the schema with a table
    tmp, real, schema = files
    (tmp / "tgt.csv").write_text("a,b\n1,2\n")
    for name, target in (("lnk.parquet", tmp / "tgt.csv"), ("lnk.csv", schema),
                         ("l2.csv", tmp / "tgt.csv.gz")):
        link = tmp / name
        os.symlink(target, link)
        if not target.exists():
            target.write_bytes(b"")
        before = target.read_bytes()
        no_reading(monkeypatch)
        assert main(_synth(real, schema, link)) == 2
        one_line_error(capsys, "--out", name, target.name)
        assert target.read_bytes() == before


def test_public_table_that_is_the_private_input_is_refused(files, capsys, monkeypatch):
    # the private records became a free prior (GUM's start, the selection) while the
    # ledger claimed the whole guarantee
    tmp, real, schema = files
    link = tmp / "hard.csv"
    os.link(real, link)
    sym = tmp / "sym.csv"
    os.symlink(real, sym)
    for public in (real, link, sym):
        no_reading(monkeypatch)
        assert main(_synth(real, schema, tmp / "o.csv", "--public", str(public))) == 2
        one_line_error(capsys, "--public", "private input")


@pytest.mark.parametrize("extra", [[], ["--workers", "1"]])
def test_the_ledger_is_written_when_the_fit_fails_after_a_charge(files, capsys, monkeypatch,
                                                                extra):
    # a failure inside fit() after the first charges (a noise draw that fails closed)
    # left no ledger: the curator could not know that budget was spent
    from gpu_dpsyn.errors import SamplerError
    from gpu_dpsyn.measure import privsyn
    tmp, real, schema = files
    out, ledger = tmp / ("o.csv" if not extra else "parts"), tmp / "l.json"

    def fails(*a, **k):
        raise SamplerError("a noise value does not fit 64 bits; nothing was released")
    monkeypatch.setattr(privsyn, "_scores", fails)  # after the 1-way marginals' charges
    assert main(_synth(real, schema, out, "--rows", "50", *extra,
                       "--ledger", str(ledger))) == 2
    one_line_error(capsys, "64 bits")
    spent = json.loads(ledger.read_text())
    assert spent["measurements"] and 0 < spent["spent_fraction"] < 1


@pytest.mark.parametrize("name", ["x.csv", "y.parquet", "z.CSV.GZ"])
def test_a_dask_output_named_like_a_table_file_is_refused(files, capsys, monkeypatch, name):
    # --out x.csv with --workers wrote a directory named x.csv of Parquet parts
    tmp, real, schema = files
    monkeypatch.setattr("gpu_dpsyn.distributed.reading.read_partitioned",
                        lambda *a, **k: pytest.fail("the input was read before the check"))
    assert main(_synth(real, schema, tmp / name, "--workers", "1")) == 2
    one_line_error(capsys, name, "directory")
    assert not (tmp / name).exists()


@pytest.mark.parametrize("text", ['<svg xmlns="http://www.w3.org/2000/svg"></svg>\n',
                                  "<html><body>my notes</body></html>\n",
                                  "<important notes>\nchapter 3\n"])
def test_a_report_replaces_only_an_earlier_report(files, capsys, monkeypatch, text):
    # any file starting with "<" counted as an earlier report and was replaced
    tmp, real, schema = files
    mine = tmp / "mine.html"
    mine.write_text(text)
    no_reading(monkeypatch)
    assert main(["evaluate", str(real), str(real), "--schema", str(schema),
                 "--report", str(mine)]) == 2
    one_line_error(capsys, "--report", "mine.html")
    assert mine.read_text() == text


def test_an_earlier_report_is_replaced(files):
    tmp, real, schema = files
    report = tmp / "r.html"
    args = ["evaluate", str(real), str(real), "--schema", str(schema), "--report",
            str(report), "--quiet", "--max-sets", "3"]
    assert main(args) == 0
    first = report.read_text()
    assert main(args) == 0 and report.read_text().startswith(first[:200])


@pytest.mark.parametrize("path", [None, 3, b"dir"])
def test_sample_to_a_path_of_the_wrong_type_is_one_line(path):
    from conftest import small_table
    from gpu_dpsyn import Synthesizer
    df, schema = small_table(200)
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False, iterations=1,
                      adaptive_rounds=0).fit(df, schema)
    with pytest.raises(DPSynError, match="directory path"):
        syn.sample_to(path, 10)


@pytest.mark.parametrize("kept", ['{"guarantee": "(1, 1e-09)-DP", "epsilon": 1}\n',
                                  '{"not_for_publication": true}\n', '{"b": 2}\n',
                                  '[1, 2]\n', '{"columns": {"a": '])
def test_schema_out_replaces_only_a_schema(files, capsys, kept):
    # a ledger, an evaluation, any other JSON (or a schema cut short: someone's work) is
    # no schema to replace with the edited one
    tmp, _, schema = files
    other = tmp / "other.json"
    other.write_text(kept)
    assert main(["schema", str(schema), "--out", str(other)]) == 2
    one_line_error(capsys, "--out", "schema")
    assert other.read_text() == kept
    old = tmp / "old.json"
    old.write_text(schema.read_text())
    assert main(["schema", str(schema), "--set", "month.nullable=true", "--out",
                 str(old)]) == 0
    assert json.loads(old.read_text())["columns"]["month"]["nullable"] is True


def test_schema_out_does_not_take_a_table_written_as_json_for_a_schema(files, capsys):
    tmp, _, schema = files
    split = tmp / "t.json"  # pandas' to_json(orient="split"): "columns" is a list
    split.write_text('{"columns": ["a", "b"], "index": [0], "data": [[1, 2]]}')
    assert main(["schema", str(schema), "--out", str(split)]) == 2
    assert '"data"' in split.read_text()


@pytest.mark.parametrize("big", [2 ** 64 - 1, 2 ** 100, -2 ** 63 - 1])
def test_integers_past_64_bits_are_refused_for_parquet_before_anything_is_read(big,
                                                                                tmp_path):
    """Listed integers past int64 came out as Python ints, which pyarrow refused with an
    OverflowError after the budget was spent (only when the fit drew that value): the
    output's check refuses them first; as text ("dtype": "string") or in a CSV they stay."""
    from gpu_dpsyn.data.ingest import check_writable
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.errors import DPSynError
    cols = {"c": {"type": "categorical", "values": [1, 2, big]}}
    with pytest.raises(DPSynError, match="'c'.*64-bit"):
        check_writable(load_schema({"columns": cols}), tmp_path / "o.parquet")
    check_writable(load_schema({"columns": cols}), tmp_path / "o.csv")
    check_writable(load_schema({"columns": {"c": {**cols["c"], "dtype": "string"}}}),
                   tmp_path / "o.parquet")
    check_writable(load_schema({"columns": {"c": {**cols["c"], "values": [1, 2 ** 63 - 1]}}}),
                   tmp_path / "o.parquet")
    if 0 < big < 2 ** 64:  # an unsigned 64-bit dtype holds it: written as such
        for dtype in ("uint64", "UInt64"):
            fits = {"c": {**cols["c"], "dtype": dtype, "nullable": dtype == "UInt64"}}
            check_writable(load_schema({"columns": fits}), tmp_path / "o.parquet")


@pytest.mark.parametrize("failure", ["error", "interrupt"])
def test_a_failed_run_records_its_spend_beside_an_earlier_ledger(files, capsys, monkeypatch,
                                                                 failure):
    """A run that fails after its charges, where --ledger holds the ledger of an earlier
    run whose table is on disk, records its spend in a file of its own beside it: the
    earlier ledger was replaced, and no longer matched the table (Ctrl-C after the fit
    gave a traceback and left ledger and table of two runs)."""
    tmp, out, ledger, args, table, first = _earlier_release(files, capsys)

    def fail(*a, **k):
        if failure == "interrupt":
            raise KeyboardInterrupt
        raise DPSynError(f"cannot write {out}: No space left on device")
    monkeypatch.setattr("gpu_dpsyn.cli.sampling.write_table", fail)
    assert main(args[:-1] + [str(ledger)]) == (130 if failure == "interrupt" else 2)
    err = capsys.readouterr().err
    assert out.read_bytes() == table and ledger.read_bytes() == first
    failed = tmp / "l.failed.json"
    assert json.loads(failed.read_text())["measurements"]
    err = "".join(x for x in err.splitlines(keepends=True)  # (warnings aside)
                  if not x.startswith("gpu-dpsyn: warning: "))
    assert err.count("\n") == 1 and "l.failed.json" in err, err
    assert main(args) == (130 if failure == "interrupt" else 2)  # and again: a new name
    assert (tmp / "l.failed-2.json").exists() and ledger.read_bytes() == first


def test_sigterm_while_writing_leaves_no_temporary_file(files, tmp_path):
    """SIGTERM (or SIGHUP) ended the process at once: the half-written table's temporary
    file stayed beside --out. It now stops the run as Ctrl-C does: cleaned up, the
    spent budget recorded, one line."""
    import signal
    import subprocess
    import sys
    import time
    tmp, real, schema = files
    out, ledger = tmp / "o.csv", tmp / "l.json"
    script = tmp_path / "slow.py"
    script.write_text(
        "import sys, time\n"
        "from gpu_dpsyn.data import csv_text\n"
        "def slow(df, fmts, stream, *dialect):\n"
        "    stream.write(b'partial')\n"
        "    stream.flush()\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        "csv_text.write_csv = slow\n"
        "from gpu_dpsyn.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")
    args = _synth(real, schema, out, "--rows", "50", "--iterations", "1", "--backend", "cpu",
                  "--adaptive-rounds", "0", "--ledger", str(ledger))
    proc = subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.strip().endswith(f"recorded in {ledger}"), err
    assert "Traceback" not in err
    assert not out.exists() and _leftovers(tmp) == []
    assert json.loads(ledger.read_text())["measurements"]


@pytest.mark.parametrize("flag", ["--ledger", "--out"])
def test_an_empty_output_name_is_refused(files, capsys, monkeypatch, flag):
    # --ledger "" (an unset variable) spent the budget and wrote no ledger, silently
    tmp, real, schema = files
    args = _synth(real, schema, tmp / "o.csv")
    args = args[:args.index("--out") + 1] + [""] + args[args.index("--out") + 2:] \
        if flag == "--out" else args + ["--ledger", ""]
    no_reading(monkeypatch)
    assert main(args) == 2
    one_line_error(capsys, flag)


def test_infer_schema_names_a_ledger_at_its_out_as_no_schema(files, capsys):
    # a ledger at --out was called "a schema with nothing left to review"
    tmp, real, schema = files
    ledger = tmp / "ledger.json"
    ledger.write_text('{"epsilon": 1, "guarantee": "x", "measurements": []}\n')
    assert main(["infer-schema", str(real), "--out", str(ledger)]) == 2
    err = capsys.readouterr().err
    assert "no schema" in err and "nothing left to review" not in err


@pytest.mark.parametrize("name", ["rep.csv", "rep.json", "rep"])
def test_a_report_not_named_html_is_refused(files, capsys, monkeypatch, name):
    # evaluate --report rep.csv wrote the HTML page into a file named as a table
    tmp, real, schema = files
    no_reading(monkeypatch)
    assert main(["evaluate", str(real), str(real), "--schema", str(schema),
                 "--report", str(tmp / name)]) == 2
    one_line_error(capsys, "--report", ".html")
    assert not (tmp / name).exists()


def test_a_signal_the_caller_ignores_stays_ignored():
    """nohup runs a command with SIGHUP ignored: the run must not stop on it (the handler
    that turns SIGTERM/SIGHUP into an interrupt replaced SIG_IGN), and every handler is
    restored afterwards."""
    import signal
    from gpu_dpsyn.cli import stopped_by_signals
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stopped_by_signals():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, before)


def test_the_record_of_a_failed_runs_spend_is_never_replaced(files, capsys, monkeypatch):
    """A run that failed after its charges wrote its ledger at --ledger (none was there):
    the next run with the same --ledger replaced it, and that spend was no longer
    recorded anywhere. It is refused before anything is read."""
    tmp, real, schema = files
    out, ledger = tmp / "o.csv", tmp / "l.json"
    args = _synth(real, schema, out, "--rows", "50", "--iterations", "1",
                  "--ledger", str(ledger))

    def full(*a, **k):
        raise DPSynError(f"cannot write {out}: No space left on device")
    with monkeypatch.context() as m:
        m.setattr("gpu_dpsyn.cli.sampling.write_table", full)
        assert main(args) == 2
    capsys.readouterr()
    failed = ledger.read_bytes()
    assert json.loads(failed)["failed_run"] and json.loads(failed)["measurements"]
    no_reading(monkeypatch)
    assert main(args) == 2
    one_line_error(capsys, "--ledger", "failed")
    assert ledger.read_bytes() == failed


def test_only_a_failed_runs_own_key_marks_its_ledger(tmp_path):
    # a column named failed_run (in selected_marginals) made a successful ledger look failed
    from gpu_dpsyn.cli.paths import _failed_run
    ok, failed = tmp_path / "ok.json", tmp_path / "failed.json"
    ok.write_text(json.dumps({"guarantee": "x", "selected_marginals": [["failed_run", "a"]]}))
    failed.write_text(json.dumps({"failed_run": "it failed", "guarantee": "x"}))
    assert not _failed_run(ok) and _failed_run(failed) and not _failed_run(tmp_path / "no")


def test_evaluate_refuses_the_ledger_of_a_failed_run(files, capsys, monkeypatch):
    tmp, real, schema = files
    ledger = tmp / "l.json"
    ledger.write_text(json.dumps({"failed_run": "failed", "guarantee": "x", "epsilon": 1,
                                  "delta": 1e-9, "measurements": []}))
    no_reading(monkeypatch)
    assert main(["evaluate", str(real), str(real), "--schema", str(schema), "--ledger",
                 str(ledger), "--report", str(tmp / "r.html")]) == 2
    one_line_error(capsys, "failed", "nothing was released")


def test_a_failure_after_the_charges_without_a_ledger_says_the_budget_went(files, capsys,
                                                                            monkeypatch):
    tmp, real, schema = files

    def full(*a, **k):
        raise DPSynError("cannot write o.csv: No space left on device")
    monkeypatch.setattr("gpu_dpsyn.cli.sampling.write_table", full)
    assert main(_synth(real, schema, tmp / "o.csv", "--rows", "50", "--iterations", "1")) == 2
    one_line_error(capsys, "No space left", "spent", "no --ledger")


@pytest.mark.parametrize("name", [".html", "x.HTM"])
def test_a_report_named_html_alone_is_taken(files, capsys, monkeypatch, name):
    from gpu_dpsyn.cli.paths import check_outputs
    tmp, real, schema = files
    check_outputs({"--report": str(tmp / name)}, [])


# -- names the file system cannot take ------------------------------------------------------
LONG = "a" * 300  # past NAME_MAX (255 bytes) on every common file system


@pytest.mark.parametrize("where", ["--out", "--ledger", "input", "infer-schema --out",
                                   "check input", "evaluate synthetic"])
def test_a_name_too_long_is_one_line(files, capsys, where):
    tmp, real, schema = files
    long_csv, long_json = str(tmp / f"{LONG}.csv"), str(tmp / f"{LONG}.json")
    args = {
        "--out": _synth(real, schema, long_csv),
        "--ledger": _synth(real, schema, tmp / "o.csv", "--ledger", long_json),
        "input": _synth(long_csv, schema, tmp / "o.csv"),
        "infer-schema --out": ["infer-schema", str(real), "--out", long_json],
        "check input": ["check", long_csv, "--schema", str(schema)],
        "evaluate synthetic": ["evaluate", str(real), long_csv, "--schema", str(schema)],
    }[where]
    assert main(args) != 0
    one_line_error(capsys, "too long")


def test_a_name_just_within_the_limit_is_written(files):
    tmp, real, schema = files
    out = tmp / ("b" * 251 + ".csv")  # 255 bytes: the temporary name beside it is longer
    assert main(_synth(real, schema, out)) == 0
    assert out.is_file() and _leftovers(tmp) == []


@pytest.mark.parametrize("what", ["schema", "ledger", "set-file"])
@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_a_document_given_by_name_must_be_a_regular_file(files, capsys, tmp_path, what,
                                                         kind):
    """/dev/zero as a schema, a ledger or a --set-file was read until memory ran out (24
    GB, then killed); a FIFO hung.  Now each is one line, before anything is read."""
    tmp, real, schema = files
    path = {"device": "/dev/zero", "directory": str(tmp_path)}.get(kind)
    if kind == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    args = {"schema": ["check", str(real), "--schema", path],
            "ledger": ["evaluate", str(real), str(real), "--schema", str(schema),
                       "--ledger", path],
            "set-file": ["schema", str(schema), "--set-file", f"month.values={path}"]}[what]
    assert main(args) == 2
    err = capsys.readouterr().err  # (it read "... is not UTF-8 text: cannot read ...")
    assert err.count("\n") == 1 and "not a regular file" in err and "UTF-8" not in err, err


@pytest.mark.parametrize("earlier", [True, False, "symlink"])
def test_a_table_that_cannot_take_its_name_leaves_the_earlier_ledger(files, capsys,
                                                                      monkeypatch, earlier):
    """The ledger took its name first; when the table's own rename then failed, the
    --ledger path described a release that never happened (and the earlier one was
    gone)."""
    tmp, real, schema = files
    out, ledger = tmp / "o.csv", tmp / "l.json"
    args = _synth(real, schema, out, "--rows", "50", "--iterations", "1", "--overwrite",
                  "--ledger", str(ledger))
    if earlier == "symlink":  # (the link was kept aside, not the ledger it names)
        (tmp / "real.json").write_text("")
        ledger.symlink_to(tmp / "real.json")
    if earlier:
        assert main(args) == 0
    capsys.readouterr()
    before = ledger.read_bytes() if earlier else None
    _replace_fails(monkeypatch, "o.csv", errno.EPERM, "Operation not permitted")
    assert main(args) == 2
    err = capsys.readouterr().err
    if earlier:
        assert ledger.read_bytes() == before and "l.failed.json" in err
        assert "failed_run" in json.loads((tmp / "l.failed.json").read_text())
    else:  # the only ledger is the failed run's
        assert "failed_run" in json.loads(ledger.read_text())
    assert not [p for p in tmp.iterdir() if ".kept-" in p.name]


def test_on_dask_a_sample_that_fails_takes_its_first_parts_with_it(files, capsys,
                                                                   monkeypatch):
    """Batch 2 failing left batch 1's part beside a ledger saying nothing was released."""
    pytest.importorskip("dask.distributed")
    import gpu_dpsyn.distributed.sampling as sampling
    tmp, real, schema = files
    out, ledger = tmp / "parts", tmp / "l.json"
    real_batch = sampling.write_batch

    def second_fails(*a, **k):  # (defined here: the worker processes run it as it is)
        if k["part"].endswith("1.parquet"):
            raise DPSynError(f"cannot write {k['part']}: No space left on device")
        return real_batch(*a, **k)
    monkeypatch.setattr(sampling, "write_batch", second_fails)
    assert main(_synth(real, schema, out, "--rows", "60", "--batch-rows", "30",
                       "--iterations", "1", "--workers", "1", "--ledger", str(ledger))) == 2
    assert not list(out.glob("*.parquet"))
    assert "nothing was released" in json.loads(ledger.read_text())["failed_run"]
    one_line_error(capsys, "No space left on device")


def test_a_part_that_cannot_be_written_is_one_line(tmp_path, monkeypatch):
    """A worker's full disk came back as a raw OSError, a traceback after the spend."""
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.distributed import sampling
    df, schema = small_table(300)
    syn = Synthesizer(1.0, 1e-9, seed=0, progress=False, iterations=1).fit(df, schema)
    arrow = sampling.arrow_schema(syn.model)
    _replace_fails(monkeypatch, "part-0.parquet", errno.ENOSPC, "No space left on device")
    with pytest.raises(DPSynError, match=r"cannot write .*part-0\.parquet: No space left"):
        sampling.write_batch(syn.model, "cpu", str(tmp_path), arrow, "part-0.parquet", 10,
                             syn.model.targets(10), 1, 1)
    assert not list(tmp_path.iterdir())


def test_on_dask_a_ledger_that_cannot_be_written_takes_the_parts_with_it(files, capsys,
                                                                         monkeypatch):
    """The parts stayed on disk while the failed run's ledger said "nothing was
    released" (and evaluate refused that ledger)."""
    pytest.importorskip("dask.distributed")
    tmp, real, schema = files
    out, ledger = tmp / "parts", tmp / "l.json"
    import gpu_dpsyn.cli.paths as paths
    real_write, calls = paths.write_text, []

    def full(path, text, flag=None):
        calls.append(path)
        if len(calls) == 1:
            raise DPSynError(f"cannot write --ledger {str(path)!r}: No space left on device")
        return real_write(path, text, flag)
    monkeypatch.setattr(paths, "write_text", full)
    assert main(_synth(real, schema, out, "--rows", "50", "--iterations", "1", "--workers",
                       "1", "--ledger", str(ledger))) == 2
    assert not list(out.glob("*.parquet"))
    assert "nothing was released" in json.loads(ledger.read_text())["failed_run"]


@pytest.mark.parametrize("name", ["l.csv", "l.csv.gz", "l.PARQUET", "l.html"])
def test_a_json_output_named_as_a_table_or_page_is_refused_first(files, capsys,
                                                                  monkeypatch, name):
    # --report had to end in .html, but a ledger, an evaluation or a schema was written as
    # JSON under a table's name (then read as one: "synthesize l.csv ..."), as asked
    tmp, real, schema = files
    no_reading(monkeypatch)
    out = tmp / name
    for args in (_synth(real, schema, tmp / "o.csv", "--ledger", str(out)),
                 ["evaluate", str(real), str(real), "--json", str(out)],
                 ["infer-schema", str(real), "--out", str(out)],
                 ["schema", str(schema), "--out", str(out)]):
        assert main(args) == 2, args
        one_line_error(capsys, repr(str(out)), ".json")
        assert not out.exists() and not (tmp / "o.csv").exists()
