"""Two synthesize runs writing one --out at once: each had checked that nothing was there
before its fit, then the later one's table (and ledger) replaced the earlier one's without
--overwrite (a probe: two runs, seeds 1 and 2, both 'wrote 100,000 synthetic rows to
cc.csv', rc 0, one table left), and the ledger left beside it could be the other run's.
The second run is now refused before it reads the table or spends anything."""
import json

import pytest

from conftest import cli_files
from gpu_dpsyn.cli import main
from gpu_dpsyn.synthesizer import Synthesizer

COLS = ["month", "carrier", "origin"]


@pytest.fixture
def files(tmp_path, flights, flights_schema):
    return cli_files(tmp_path, flights, flights_schema, COLS, 2000)


def _args(real, schema, out, ledger, seed, *extra):
    return ["synthesize", str(real), "--schema", str(schema), "--epsilon", "1", "--delta",
            "1e-9", "--out", str(out), "--ledger", str(ledger), "--rows", "50", "--seed",
            str(seed), "--iterations", "1", "--quiet", *extra]


@pytest.mark.parametrize("extra", [[], ["--overwrite"]])
@pytest.mark.parametrize("shared", ["--out", "--ledger"])
def test_a_second_run_onto_an_output_being_written_is_refused_before_its_fit(
        files, capsys, monkeypatch, extra, shared):
    tmp, real, schema = files
    fit, fits, second = Synthesizer.fit, [], {}

    def fit_and_start_another(self, *a, **k):
        fits.append(1)
        if len(fits) == 1:  # the second run starts while the first is fitting
            out = tmp / "o.csv" if shared == "--out" else tmp / "o2.csv"
            ledger = tmp / "l.json" if shared == "--ledger" else tmp / "l2.json"
            second["rc"] = main(_args(real, schema, out, ledger, 2, *extra))
            second["err"] = capsys.readouterr().err
        return fit(self, *a, **k)
    monkeypatch.setattr(Synthesizer, "fit", fit_and_start_another)
    assert main(_args(real, schema, tmp / "o.csv", tmp / "l.json", 1, *extra)) == 0
    assert second["rc"] == 2 and len(fits) == 1, second  # refused, nothing spent
    err = second["err"].strip().splitlines()[-1]
    assert err.startswith("gpu-dpsyn: error: ") and "another gpu-dpsyn run" in err, err
    assert shared in err, err
    assert json.loads((tmp / "l.json").read_text())["table"] == {"file": "o.csv", "rows": 50}
    assert not (tmp / "o2.csv").exists() and not (tmp / "l2.json").exists()
    # the claim is let go: a run after it is not refused, nor are its files left behind
    assert main(_args(real, schema, tmp / "o.csv", tmp / "l.json", 3, "--overwrite")) == 0
    assert sorted(p.name for p in tmp.iterdir()) == ["l.json", "o.csv", "real.csv",
                                                     "schema.json"]


def test_a_file_of_the_users_at_the_lock_name_is_not_removed(files):
    """The claim's lock file is removed after a run only where it is still the empty file
    the run locked: a user's file of that name (.o.csv.lock), or an output written there
    (--ledger .o.csv.lock), had been deleted after a run that said it wrote it."""
    tmp, real, schema = files
    (tmp / ".o.csv.lock").write_text("the user's own\n")
    assert main(_args(real, schema, tmp / "o.csv", tmp / "l.json", 1)) == 0
    assert (tmp / ".o.csv.lock").read_text() == "the user's own\n"
    assert main(_args(real, schema, tmp / "p.csv", tmp / ".p.csv.lock", 1)) == 0
    assert json.loads((tmp / ".p.csv.lock").read_text())["table"]["file"] == "p.csv"


def test_two_long_names_alike_in_their_first_bytes_get_claims_of_their_own(tmp_path):
    """Lock names were cut to the file system's limit, so two outputs whose names shared
    their first 250 bytes shared a lock: the run writing both refused itself ('being
    written by another gpu-dpsyn run')."""
    from gpu_dpsyn.data.files import claiming
    stem = "x" * 245  # names of 254 bytes, one system's most is 255: ".NAME.lock" is cut
    a, b = tmp_path / f"{stem}-1.csv.gz", tmp_path / f"{stem}-1.csv.xz"
    with claiming({"--out": a, "--ledger": b}):
        locks = sorted(p.name for p in tmp_path.iterdir())
    assert len(locks) == 2 and all(len(n.encode()) <= 255 for n in locks)
    assert not list(tmp_path.iterdir())  # both removed after


def _second_run_refused(second, flag):
    assert second["rc"] == 2, second
    err = second["err"].strip().splitlines()[-1]
    assert err.startswith("gpu-dpsyn: error: ") and "another gpu-dpsyn run" in err, err
    assert flag in err, err


def test_a_second_dask_run_onto_parts_being_written_is_refused(files, capsys, monkeypatch):
    """--workers runs write a directory of parts and a ledger: two at once had both found
    the directory empty, and their parts joined one union."""
    from contextlib import contextmanager
    tmp, real, schema = files
    second, started = {}, []

    @contextmanager
    def client_and_start_another(*a, **k):
        started.append(1)
        if len(started) == 1:  # the second run starts while the first one's cluster runs
            second["rc"] = main(_args(real, schema, tmp / "parts", tmp / "l2.json", 2,
                                      "--workers", "1"))
            second["err"] = capsys.readouterr().err
        raise KeyboardInterrupt  # (the first run goes no further: the claim is the test)
        yield
    monkeypatch.setattr("gpu_dpsyn.distributed.cluster.dask_client", client_and_start_another)
    assert main(_args(real, schema, tmp / "parts", tmp / "l.json", 1, "--workers", "1"))
    _second_run_refused(second, "--out")
    assert len(started) == 1 and not (tmp / "l2.json").exists()
    assert sorted(p.name for p in tmp.iterdir()) == ["real.csv", "schema.json"]


def test_a_second_evaluate_onto_a_report_being_written_is_refused(files, capsys,
                                                                  monkeypatch):
    tmp, real, schema = files
    from gpu_dpsyn.evaluation import fidelity
    tables, second = fidelity.evaluate_tables, {}

    def evaluate_and_start_another(*a, **k):
        if not second:
            second["rc"] = None  # (once: a second run let through would call this too)
            second["rc"] = main(["evaluate", str(real), str(real), "--schema", str(schema),
                                 "--json", str(tmp / "e2.json"), "--report",
                                 str(tmp / "r.html"), "--quiet"])
            second["err"] = capsys.readouterr().err
        return tables(*a, **k)
    monkeypatch.setattr(fidelity, "evaluate_tables", evaluate_and_start_another)
    assert main(["evaluate", str(real), str(real), "--schema", str(schema), "--json",
                 str(tmp / "e.json"), "--report", str(tmp / "r.html"), "--quiet"]) == 0
    _second_run_refused(second, "--report")
    assert not (tmp / "e2.json").exists() and (tmp / "r.html").exists()
    assert sorted(p.name for p in tmp.iterdir()) == ["e.json", "r.html", "real.csv",
                                                     "schema.json"]


def test_a_second_infer_schema_onto_a_draft_being_written_is_refused(files, capsys,
                                                                     monkeypatch):
    """Both had found --out missing (or an earlier draft); the later draft replaced the
    other's, or a schema reviewed since, without a word."""
    tmp, real, _ = files
    from gpu_dpsyn.data import inference
    drafting, second = inference.infer_schema_with_summary, {}

    def draft_and_start_another(*a, **k):
        if not second:
            second["rc"] = None  # (once: a second run let through would call this too)
            second["rc"] = main(["infer-schema", str(real), "--out", str(tmp / "d.json")])
            second["err"] = capsys.readouterr().err
        return drafting(*a, **k)
    monkeypatch.setattr(inference, "infer_schema_with_summary", draft_and_start_another)
    assert main(["infer-schema", str(real), "--out", str(tmp / "d.json")]) == 0
    _second_run_refused(second, "--out")
    assert sorted(p.name for p in tmp.iterdir()) == ["d.json", "real.csv", "schema.json"]


def test_a_second_schema_edit_of_a_file_being_edited_is_refused(files, capsys, monkeypatch):
    """Two edits in place at once: each read the file, and the later write lost the other's
    setting without a word."""
    tmp, _, schema = files
    from gpu_dpsyn.data import schema_edit
    editing, second = schema_edit.edit, {}

    def edit_and_start_another(*a, **k):
        if not second:
            second["rc"] = None  # (once)
            second["rc"] = main(["schema", str(schema), "--set", "max_rows=10"])
            second["err"] = capsys.readouterr().err
        return editing(*a, **k)
    monkeypatch.setattr(schema_edit, "edit", edit_and_start_another)
    assert main(["schema", str(schema), "--set", "max_rows=20"]) == 0
    _second_run_refused(second, "FILE")
    assert json.loads(schema.read_text())["max_rows"] == 20
