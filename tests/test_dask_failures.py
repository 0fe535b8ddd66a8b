"""sample_to on Dask when a batch fails: nothing is written after it returns (a batch still
in flight used to rename its part into place after the CLI had removed the failed run's
parts), and the CLI says the failure in one line."""
import os
import time

import pandas as pd
import pytest

pytest.importorskip("dask.distributed")

from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.errors import DPSynError  # noqa: E402

KW = dict(seed=3, iterations=4, progress=False, backend="cpu")


def _table(n=4000):
    df = pd.DataFrame({"a": [i % 5 for i in range(n)], "b": [i % 3 for i in range(n)]})
    schema = {"columns": {"a": {"type": "categorical", "values": [0, 1, 2, 3, 4]},
                          "b": {"type": "categorical", "values": [0, 1, 2]}}}
    return df, schema


def test_a_failed_batch_leaves_no_batch_writing_after_sample_to_returns(client, tmp_path,
                                                                       monkeypatch):
    import pyarrow.parquet as pq
    df, schema = _table()
    real = pq.write_table

    def slow_or_full(table, where, **kw):  # part 0: a full disk; the others take a while
        if "part-00000" in str(where):
            raise OSError(28, "No space left on device")
        time.sleep(1.0)
        return real(table, where, **kw)
    monkeypatch.setattr(pq, "write_table", slow_or_full)
    syn = Synthesizer(1.0, 1e-9, client=client, **KW).fit(df, schema)
    out = tmp_path / "out"
    with pytest.raises(DPSynError, match="No space left on device"):
        syn.sample_to(out, 4000, batch_rows=1000)
    seen = sorted(os.listdir(out))
    time.sleep(2.5)  # a batch still running would rename its part in by now
    assert sorted(os.listdir(out)) == seen
    assert not [f for f in seen if f.endswith(".tmp")], seen


def test_the_cli_removes_a_part_that_lands_while_its_cluster_closes(client, tmp_path,
                                                                     monkeypatch, capsys):
    """A batch still running when the run fails (or is interrupted) writes its part while
    the local cluster shuts down: the failed run's parts are removed after that."""
    from contextlib import contextmanager

    import pyarrow.parquet as pq
    from gpu_dpsyn.cli import main
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.distributed import cluster
    df, schema = _table()
    (tmp_path / "in").mkdir()
    df.to_parquet(tmp_path / "in" / "p0.parquet")
    load_schema(schema).save(tmp_path / "s.json")
    out = tmp_path / "out"

    @contextmanager
    def closing_late(*a, **k):
        try:
            yield client
        finally:
            (out / "part-00003.parquet").write_bytes(b"PAR1 a batch that was in flight")

    def full(table, where, **kw):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(cluster, "dask_client", closing_late)
    monkeypatch.setattr(pq, "write_table", full)
    rc = main(["synthesize", str(tmp_path / "in"), "--schema", str(tmp_path / "s.json"),
               "--epsilon", "1", "--delta", "1e-9", "--seed", "3", "--quiet", "--workers",
               "1", "--rows", "4000", "--batch-rows", "1000", "--out", str(out)])
    assert rc == 2 and "No space left on device" in capsys.readouterr().err
    assert os.listdir(out) == []


def test_a_refusal_on_a_local_clusters_worker_is_one_line(tmp_path, capfd):
    """The worker's own log of the failed task (its exception and traceback) stays off
    the terminal: the client reports the error, once."""
    from conftest import one_line_error
    from gpu_dpsyn.cli import main
    from gpu_dpsyn.data.schema import load_schema
    df, schema = _table(2000)
    (tmp_path / "in").mkdir()
    df.to_parquet(tmp_path / "in" / "p0.parquet")
    df.assign(a=9).to_parquet(tmp_path / "in" / "p1.parquet")  # 9 is no value of a
    load_schema(schema).save(tmp_path / "s.json")
    rc = main(["synthesize", str(tmp_path / "in"), "--schema", str(tmp_path / "s.json"),
               "--epsilon", "1", "--delta", "1e-9", "--quiet", "--workers", "1",
               "--on-invalid", "error", "--out", str(tmp_path / "out")])
    assert rc == 2
    one_line_error(capfd, "partition 1", "'a'")


def test_the_refusal_said_is_the_first_partitions_whichever_worker_is_quicker(
        client, tmp_path, monkeypatch):
    """Partitions 1 and 3 both hold a value the schema does not allow (on_invalid="error"):
    the message names partition 1, also when partition 3 fails first (one run said one,
    the next the other)."""
    from gpu_dpsyn.distributed import counting
    from gpu_dpsyn.errors import DataError
    df, schema = _table(4000)
    for i in range(4):
        part = df.iloc[i * 1000:(i + 1) * 1000]
        part = part.assign(a=9) if i in (1, 3) else part
        part.to_parquet(tmp_path / f"p{i}.parquet")
    real = counting.encode_partition

    def late_for_one(df, schema, backend, index, on_invalid="error"):
        if index == 1:
            time.sleep(0.5)
        return real(df, schema, backend, index, on_invalid)
    monkeypatch.setattr(counting, "encode_partition", late_for_one)
    for _ in range(6):  # the set Dask raised from was in hash order: 1 or 3 by chance
        with pytest.raises(DataError, match="^partition 1: column 'a'"):
            Synthesizer(1.0, 1e-9, client=client, on_invalid="error", **KW).fit(
                str(tmp_path), schema)


@pytest.mark.parametrize("bad", ["tcp://127.0.0.1:8786", 5, object()])
def test_a_client_that_is_no_dask_client_is_refused_in_one_line(tmp_path, bad):
    """client="tcp://..." (an address where a Client belongs) gave AttributeError: 'str'
    object has no attribute 'compute' from a fit of a path, and was silently ignored by a
    fit of a pandas DataFrame."""
    df, schema = _table(300)
    df.to_parquet(tmp_path / "p0.parquet")
    for source in (str(tmp_path), df):
        with pytest.raises(DPSynError, match="client= takes a dask.distributed.Client"):
            Synthesizer(1.0, 1e-9, client=bad, **KW).fit(source, schema)
    syn = Synthesizer(1.0, 1e-9, **KW).fit(df, schema)
    syn.client = bad
    with pytest.raises(DPSynError, match="client= takes a dask.distributed.Client"):
        syn.sample_to(tmp_path / "out", 100)
    assert not (tmp_path / "out").exists()
    with pytest.raises(DPSynError, match="client= takes a dask.distributed.Client"):
        Synthesizer.load(syn.save(tmp_path / "m.dpsyn"), client=bad)


def test_a_closed_client_is_refused_in_one_line(tmp_path):
    """A closed client gave ClosedClientError (fit) or RuntimeError: IOLoop is closed
    (sample_to)."""
    from dask.distributed import Client, LocalCluster
    df, schema = _table(300)
    df.to_parquet(tmp_path / "p0.parquet")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        pass
    with pytest.raises(DPSynError, match="the Dask client is closed"):
        Synthesizer(1.0, 1e-9, client=c, **KW).fit(str(tmp_path), schema)
    syn = Synthesizer(1.0, 1e-9, **KW).fit(df, schema)
    syn.client = c
    with pytest.raises(DPSynError, match="the Dask client is closed"):
        syn.sample_to(tmp_path / "out", 100)
    assert not (tmp_path / "out").exists()


def test_a_cluster_that_gives_no_result_is_not_waited_for_twice(client, tmp_path,
                                                                 monkeypatch):
    """After a batch's failure sample_to waits for the batches in flight; after the
    cluster's own timeout it does not wait the timeout again."""
    import pyarrow.parquet as pq
    from gpu_dpsyn.distributed import cluster
    from gpu_dpsyn.errors import ClusterError
    df, schema = _table()
    real = pq.write_table

    def stuck(table, where, **kw):
        time.sleep(4.0)
        return real(table, where, **kw)
    syn = Synthesizer(1.0, 1e-9, client=client, **KW).fit(df, schema)
    monkeypatch.setattr(pq, "write_table", stuck)
    monkeypatch.setattr(cluster, "TIMEOUT_S", 1.0)
    t0 = time.perf_counter()
    with pytest.raises(ClusterError, match="gave no result in 1 s"):
        syn.sample_to(tmp_path / "out", 2000, batch_rows=1000)
    assert time.perf_counter() - t0 < 1.8
    time.sleep(3.5)  # the stuck batches end before the next test
