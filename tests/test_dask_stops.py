"""A Dask run stopped (Ctrl-C) or refused: an interrupted --scheduler run leaves no part
behind once its batches still running end, and a refusal comes before the cluster
starts."""
import os
import time

import pandas as pd
import pytest

pytest.importorskip("dask.distributed")

from gpu_dpsyn.cli import main  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402

SCHEMA = {"columns": {"a": {"type": "categorical", "values": [0, 1, 2, 3, 4]},
                      "b": {"type": "categorical", "values": [0, 1, 2]}}}


def _files(tmp_path, schema=SCHEMA, n=4000):
    df = pd.DataFrame({"a": [i % 5 for i in range(n)], "b": [i % 3 for i in range(n)]})
    if "who" in schema["columns"]:
        df["who"] = range(n)
    (tmp_path / "in").mkdir()
    df.to_parquet(tmp_path / "in" / "p0.parquet")
    load_schema(schema).save(tmp_path / "s.json")
    return ["synthesize", str(tmp_path / "in"), "--schema", str(tmp_path / "s.json"),
            "--epsilon", "1", "--delta", "1e-9", "--seed", "3", "--quiet", "--iterations",
            "4", "--rows", "4000", "--batch-rows", "1000", "--out", str(tmp_path / "out")]


def test_an_interrupted_scheduler_run_leaves_no_part_once_its_batches_end(
        tmp_path, monkeypatch, capsys):
    """Ctrl-C while two batches are being written on a scheduler's workers (which the run
    does not close): nothing lands in --out after the command returns."""
    import pyarrow.parquet as pq
    from dask.distributed import LocalCluster
    from gpu_dpsyn.distributed import sampling
    real_write, real_wait = pq.write_table, sampling.wait_for

    def slow(table, where, **kw):  # each batch writes for a while
        time.sleep(1.5)
        return real_write(table, where, **kw)

    def interrupted(*a, **k):  # Ctrl-C once the first batches are writing
        time.sleep(0.5)
        raise KeyboardInterrupt
    args = _files(tmp_path)
    monkeypatch.setattr(pq, "write_table", slow)
    monkeypatch.setattr(sampling, "wait_for", interrupted)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster:
        rc = main(args + ["--scheduler", cluster.scheduler_address])
        assert rc == 130 and "interrupted" in capsys.readouterr().err
        out = tmp_path / "out"
        time.sleep(2.5)  # a batch still writing would have landed its part by now
        assert os.listdir(out) == []
    monkeypatch.setattr(sampling, "wait_for", real_wait)


def test_a_directory_left_with_temporary_parts_is_refused_naming_them(tmp_path):
    """What an abandoned batch may leave (its wait cut short): a re-run says what it is."""
    from gpu_dpsyn.distributed.sampling import check_output_dir
    from gpu_dpsyn.errors import DPSynError
    (tmp_path / f".part-00001.parquet.{'a' * 32}.tmp").write_bytes(b"PAR1")
    with pytest.raises(DPSynError, match="temporary parts of an interrupted run; remove"):
        check_output_dir(tmp_path)


def test_an_id_column_is_refused_before_the_local_cluster_starts(tmp_path, monkeypatch,
                                                                 capsys):
    from gpu_dpsyn.distributed import cluster
    schema = {"columns": {**SCHEMA["columns"], "who": {"type": "id"}}}
    args = _files(tmp_path, schema)

    def started(*a, **k):
        pytest.fail("the cluster started before the refusal")
    monkeypatch.setattr(cluster, "dask_client", started)
    monkeypatch.setattr(cluster, "local_cluster", started)
    assert main(args + ["--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "individual id column ('who')" in err and "not done on Dask" in err
    assert err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()
