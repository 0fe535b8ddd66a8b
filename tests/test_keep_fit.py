"""A spent fit is never lost: when sampling or writing the table fails after synthesize's
fit (a full disk, memory, Ctrl-C), the fitted model is saved beside --out and the one error
line gives the `gpu-dpsyn sample` command that writes the table without spending again."""
import errno
import json
import os
import re
import shlex
import stat

import pytest

from conftest import cli_files, one_line_error
from gpu_dpsyn.cli import main
from test_robustness_outputs import _failing_to_csv

COLS = ["month", "carrier", "origin"]
ENOSPC = OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def files(tmp_path, flights, flights_schema):
    return cli_files(tmp_path, flights, flights_schema, COLS, 2000)


def _synth(real, schema, out, *extra):
    return ["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
            "1e-9", "--out", str(out), "--quiet", "--iterations", "1", "--adaptive-rounds",
            "0", "--seed", "7", *extra]


def _reference(files, capsys, *extra) -> bytes:
    """The table an unfailed run with the same seed writes."""
    tmp, real, schema = files
    ref = tmp / "ref" / "o.csv"
    ref.parent.mkdir()
    assert main(_synth(real, schema, ref, *extra)) == 0
    capsys.readouterr()
    return ref.read_bytes()


def _error_line(capsys) -> str:
    lines = [x for x in capsys.readouterr().err.splitlines()
             if not x.startswith("gpu-dpsyn: warning: ")]
    assert len(lines) == 1, lines
    return lines[0]


def _command(line: str) -> list:
    """The sample command the error line gives, as main() takes it."""
    m = re.search(r"gpu-dpsyn sample [^;]*", line)
    assert m, line
    words = shlex.split(m[0])
    assert words[:2] == ["gpu-dpsyn", "sample"]
    return words[1:]


def test_a_full_disk_after_the_fit_keeps_it_and_sample_writes_the_same_table(
        files, capsys, monkeypatch):
    want = _reference(files, capsys, "--rows", "300")
    tmp, real, schema = files
    out, ledger = tmp / "o.csv", tmp / "l.json"
    _failing_to_csv(monkeypatch, ENOSPC)
    assert main(_synth(real, schema, out, "--rows", "300", "--ledger", str(ledger))) == 2
    line = _error_line(capsys)
    fit = tmp / "o.csv.fit"
    assert line.startswith("gpu-dpsyn: error: ") and "No space left on device" in line
    assert str(fit) in line and "spent" in line and "keep it private" in line, line
    assert fit.is_file() and not out.exists()
    assert (os.stat(fit).st_mode & 0o077) == 0  # the owner's alone: a seeded fit's noise
    assert json.loads(ledger.read_text())["failed_run"]  # the spend, recorded as before
    monkeypatch.undo()
    cmd = _command(line)
    assert "--ledger" in cmd and str(ledger) not in cmd  # (that one records the failure)
    assert main(cmd) == 0
    err = capsys.readouterr().err
    assert "no budget" in err.lower() and str(out) in err
    assert out.read_bytes() == want
    rep = json.loads((tmp / cmd[cmd.index("--ledger") + 1]).read_text())
    assert "failed_run" not in rep and rep["table"] == {"file": "o.csv", "rows": 300}


def test_memory_running_out_in_sampling_keeps_the_fit_at_its_rng_call(
        files, capsys, monkeypatch):
    want = _reference(files, capsys)  # the noisy row count: no --rows
    tmp, real, schema = files
    out = tmp / "o.csv"

    def no_memory(*a, **k):
        raise MemoryError()
    monkeypatch.setattr("gpu_dpsyn.synthesizer.generate", no_memory)
    assert main(_synth(real, schema, out)) == 2
    line = _error_line(capsys)
    assert "memory" in line and str(tmp / "o.csv.fit") in line, line
    monkeypatch.undo()
    assert main(_command(line)) == 0
    capsys.readouterr()
    assert out.read_bytes() == want  # the draw the failed sample would have made


def test_ctrl_c_while_writing_keeps_the_fit(files, capsys, monkeypatch):
    tmp, real, schema = files
    out = tmp / "o.csv"
    _failing_to_csv(monkeypatch, KeyboardInterrupt())
    assert main(_synth(real, schema, out, "--rows", "100")) == 130
    line = _error_line(capsys)
    assert line.startswith("gpu-dpsyn: interrupted") and str(tmp / "o.csv.fit") in line
    assert (tmp / "o.csv.fit").is_file() and "gpu-dpsyn sample" in line


def test_the_kept_fit_never_replaces_a_file_already_there(files, capsys, monkeypatch):
    tmp, real, schema = files
    out = tmp / "o.csv"
    (tmp / "o.csv.fit").write_text("a user's notes\n")
    _failing_to_csv(monkeypatch, ENOSPC)
    assert main(_synth(real, schema, out, "--rows", "100")) == 2
    line = _error_line(capsys)
    assert (tmp / "o.csv.fit").read_text() == "a user's notes\n"
    kept = [p for p in tmp.iterdir() if p.name.startswith("o.csv.fit-")]
    assert len(kept) == 1 and str(kept[0]) in line, line


def test_a_fit_that_cannot_be_kept_is_said_in_the_same_line(files, capsys, monkeypatch):
    tmp, real, schema = files
    out = tmp / "o.csv"
    _failing_to_csv(monkeypatch, ENOSPC)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr("gpu_dpsyn.saving.pickle.dump", full)
    assert main(_synth(real, schema, out, "--rows", "100")) == 2
    line = _error_line(capsys)
    assert "could not be kept" in line and "spent" in line, line
    assert "gpu-dpsyn sample" not in line
    assert not [p for p in tmp.iterdir() if ".fit" in p.name]  # no empty placeholder


@pytest.fixture
def fitted(files, capsys):
    """(tmp, a kept fit's path, the table it writes) from a run whose write failed."""
    tmp, real, schema = files
    with pytest.MonkeyPatch.context() as mp:
        _failing_to_csv(mp, ENOSPC)
        assert main(_synth(real, schema, tmp / "o.csv", "--rows", "50")) == 2
    capsys.readouterr()
    return tmp, tmp / "o.csv.fit"


def test_sample_refuses_an_existing_output_without_overwrite(fitted, capsys):
    tmp, fit = fitted
    out = tmp / "mine.csv"
    out.write_text("a,b\n1,2\n")
    assert main(["sample", str(fit), "--out", str(out), "--quiet"]) == 2
    one_line_error(capsys, "--out", "--overwrite")
    assert out.read_text() == "a,b\n1,2\n"
    assert main(["sample", str(fit), "--out", str(out), "--quiet", "--overwrite"]) == 0
    assert out.read_text().splitlines()[0] == ",".join(COLS)


def test_sample_refuses_a_ledger_of_a_failed_run_and_other_files(fitted, capsys):
    tmp, fit = fitted
    failed = tmp / "failed.json"
    failed.write_text('{"failed_run": "x", "guarantee": "y"}\n')
    assert main(["sample", str(fit), "--out", str(tmp / "x.csv"), "--ledger",
                 str(failed)]) == 2
    one_line_error(capsys, "--ledger")
    assert main(["sample", str(fit), "--out", str(fit)]) == 2  # the fit itself
    one_line_error(capsys, "--out")
    assert fit.is_file() and not (tmp / "x.csv").exists()


def test_sample_of_a_file_that_is_no_model_is_one_line(fitted, capsys):
    tmp, _ = fitted
    other = tmp / "real.csv"
    assert main(["sample", str(other), "--out", str(tmp / "x.csv")]) == 2
    one_line_error(capsys, "not a gpu_dpsyn model file")
    assert main(["sample", str(tmp), "--out", str(tmp / "x.csv")]) == 2
    one_line_error(capsys, "directory")
    assert main(["sample", str(tmp / "missing.fit"), "--out", str(tmp / "x.csv")]) == 2
    one_line_error(capsys, "missing.fit")
    assert not (tmp / "x.csv").exists()


def test_sample_rows_and_parquet(fitted, capsys):
    pytest.importorskip("pyarrow")
    import pandas as pd
    tmp, fit = fitted
    out = tmp / "x.parquet"
    assert main(["sample", str(fit), "--out", str(out), "--rows", "70", "--backend",
                 "cpu", "--quiet"]) == 0
    assert len(pd.read_parquet(out)) == 70 and list(pd.read_parquet(out)) == COLS
    assert stat.S_ISREG(os.stat(out).st_mode)


def test_a_fit_that_cannot_be_kept_beside_out_is_kept_beside_the_ledger(
        files, capsys, monkeypatch):
    tmp, real, schema = files
    (tmp / "a").mkdir()
    (tmp / "b").mkdir()
    out, ledger = tmp / "a" / "o.csv", tmp / "b" / "l.json"
    _failing_to_csv(monkeypatch, ENOSPC)
    real_open = os.open

    def refused(path, *a, **k):  # out's directory takes no new file now
        if str(path).startswith(f"{out}.fit"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, *a, **k)
    monkeypatch.setattr(os, "open", refused)
    assert main(_synth(real, schema, out, "--rows", "60", "--ledger", str(ledger))) == 2
    line = _error_line(capsys)
    assert str(tmp / "b" / "l.json.fit") in line, line
    assert (tmp / "b" / "l.json.fit").is_file() and not list((tmp / "a").iterdir())


def test_the_kept_fit_is_never_readable_by_others_while_it_is_written(tmp_path, monkeypatch):
    # the O_EXCL file is its owner's (0600), but the model was written to a temporary file
    # made with the umask's mode (0644), readable by anyone until it took the name
    import pickle
    from gpu_dpsyn.data import files
    path = tmp_path / "o.csv.fit"
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    modes = []
    old = os.umask(0o022)
    try:
        with files.replacing(path) as tmp:
            with open(tmp, "wb") as f:
                pickle.dump({"seeded": True}, f)
                modes.append(stat.S_IMODE(os.fstat(f.fileno()).st_mode))
    finally:
        os.umask(old)
    assert modes == [0o600] and stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_read_only_file_is_still_replaced_whole(tmp_path):
    # the temporary file takes the replaced file's mode while it is written: its owner
    # must still be able to write it (not root: a 0444 file made it unwritable)
    from gpu_dpsyn.data import files
    path = tmp_path / "l.json"
    path.write_text("{}")
    os.chmod(path, 0o444)
    seen = []
    with files.replacing(path) as tmp:
        seen.append(stat.S_IMODE(os.stat(tmp).st_mode))
        with open(tmp, "w") as f:
            f.write('{"a": 1}')
    assert seen == [0o644] and path.read_text() == '{"a": 1}'
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o444


def test_memory_running_out_while_the_fit_is_kept_is_said_in_the_same_line(
        files, capsys, monkeypatch):
    # _kept caught OSError and DPSynError alone: a MemoryError pickling the model (likely
    # where memory ran out in the sample) replaced the run's error and its words
    tmp, real, schema = files
    out = tmp / "o.csv"
    _failing_to_csv(monkeypatch, ENOSPC)

    def no_memory(*a, **k):
        raise MemoryError()
    monkeypatch.setattr("gpu_dpsyn.saving.pickle.dump", no_memory)
    assert main(_synth(real, schema, out, "--rows", "100")) == 2
    line = _error_line(capsys)
    assert "No space left on device" in line and "could not be kept" in line, line
    assert "out of memory" in line and "spent" in line, line
    assert not [p for p in tmp.iterdir() if ".fit" in p.name]
