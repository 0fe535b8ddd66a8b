"""Scale-out on Dask (LocalCluster, 2 in-process workers, NumPy backend): the same noisy
marginals and ledger as in memory, exact row counts, batch quality, retried tasks."""
import json
import os
import sys

import numpy as np
import pandas as pd
import pytest

dask_distributed = pytest.importorskip("dask.distributed")

from conftest import _flights, FLIGHTS_SCHEMA  # noqa: E402
from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.backends import get_backend  # noqa: E402
from gpu_dpsyn.cli import main  # noqa: E402
from gpu_dpsyn.distributed.splitting import batch_sizes, integer_target, split_targets  # noqa: E402
from gpu_dpsyn.data.encoding import encode  # noqa: E402
from gpu_dpsyn.errors import DataError, DPSynError  # noqa: E402
from gpu_dpsyn.data.ingest import read_table, write_table  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402

COLS = ["month", "dep_delay", "carrier", "origin", "distance", "sched_dep_time", "dest"]
KW = dict(seed=3, iterations=8, progress=False, backend="cpu")


@pytest.fixture(scope="module")
def table():
    flights_schema = load_schema(FLIGHTS_SCHEMA)
    return (_flights(20000)[COLS].copy(),
            {"columns": {c: flights_schema[c].to_dict() for c in COLS}})


@pytest.fixture(scope="module")
def parts(table, tmp_path_factory):
    """The table as four Parquet files and an empty one, and as three CSV files."""
    df, _ = table
    d = tmp_path_factory.mktemp("parts")
    (d / "pq").mkdir()
    (d / "csv").mkdir()
    for i, lo in enumerate(range(0, len(df), 5000)):
        df.iloc[lo:lo + 5000].to_parquet(d / "pq" / f"p{i}.parquet")
    df.iloc[:0].to_parquet(d / "pq" / "p9_empty.parquet")  # an empty partition counts 0
    for i, lo in enumerate(range(0, len(df), 7000)):
        df.iloc[lo:lo + 7000].to_csv(d / "csv" / f"p{i}.csv", index=False)
    df.to_csv(d / "whole.csv", index=False)
    return d


def _same_fit(a: Synthesizer, b: Synthesizer) -> None:
    assert a.privacy_report() == b.privacy_report()  # the ledger: charges, sigmas, selection
    assert len(a.model.marginals) == len(b.model.marginals)
    for x, y in zip(a.model.marginals, b.model.marginals):
        assert x.attrs == y.attrs and np.array_equal(x.values, y.values)  # to the bit
    assert a.model.recodes.keys() == b.model.recodes.keys()
    assert all(np.array_equal(a.model.recodes[k].lut, b.model.recodes[k].lut) for k in a.model.recodes)
    assert a.model.n_estimate == b.model.n_estimate


@pytest.mark.parametrize("method,source", [("privsyn", "parquet glob"), ("dpsyn", "csv dir"),
                                           ("privsyn", "dask frame")])
def test_same_noisy_marginals_and_ledger_as_in_memory(client, table, parts, method, source):
    df, schema = table
    local = Synthesizer(1.0, 1e-9, method=method, **KW)
    if source == "csv dir":  # as the CLI reads one CSV file
        local.fit(read_table(parts / "whole.csv", schema=load_schema(schema)), schema)
        data = parts / "csv"
    else:
        local.fit(df, schema)
        data = str(parts / "pq" / "*.parquet")
        if source == "dask frame":
            import dask.dataframe as dd
            data = dd.read_parquet(str(parts / "pq"))
    dist = Synthesizer(1.0, 1e-9, method=method, client=client, **KW).fit(data, schema)
    _same_fit(local, dist)
    if method == "privsyn":
        assert local.model.recodes  # low-count merging ran, on every partition too


def test_private_quantile_bins_are_chosen_alike_on_dask(client, table, parts):
    df, schema = table
    spec = dict(schema["columns"]["distance"])
    spec.pop("edges", None)
    schema = {"columns": {**schema["columns"], "distance": {
        **spec, "min": 0, "max": 5000, "bins": {"private_quantiles": 8}}}}
    local = Synthesizer(1.0, 1e-9, **KW).fit(df, schema)
    dist = Synthesizer(1.0, 1e-9, client=client, **KW).fit(str(parts / "pq" / "*.parquet"),
                                                             schema)
    assert local.privacy_report()["private_bins"] == dist.privacy_report()["private_bins"]
    _same_fit(local, dist)


def test_sample_to_writes_exactly_n_rows_numbered_across_parts(client, table, tmp_path):
    df, schema = table
    df = df.assign(row=np.arange(len(df)).astype(str))
    schema = {"columns": {**schema["columns"], "row": {"type": "id"}}}
    syn = Synthesizer(1.0, 1e-9, client=client, **KW).fit(df, schema)  # pandas: in memory
    res = syn.sample_to(tmp_path / "a", 25_001, batch_rows=6000)  # on the cluster
    assert res["batches"] == 5 and res["rows"] == 25_001
    files = sorted(os.listdir(tmp_path / "a"))
    assert files == [f"part-0000{b}.parquet" for b in range(5)]  # nothing else left behind
    out = pd.read_parquet(tmp_path / "a")
    assert len(out) == 25_001
    assert np.array_equal(np.sort(out["row"].to_numpy()), np.arange(1, 25_002))
    one = [len(pd.read_parquet(tmp_path / "a" / f)) for f in files]
    assert one == [5001, 5000, 5000, 5000, 5000]
    # the same seed gives the same parts, on the cluster or in this process
    again = Synthesizer(1.0, 1e-9, client=client, **KW).fit(df, schema)
    again.sample_to(tmp_path / "b", 25_001, batch_rows=6000)
    here = Synthesizer(1.0, 1e-9, **KW).fit(df, schema)  # no client: batch after batch
    here.sample_to(tmp_path / "c", 25_001, batch_rows=6000)
    for f in files:
        ref = pd.read_parquet(tmp_path / "a" / f)
        pd.testing.assert_frame_equal(ref, pd.read_parquet(tmp_path / "b" / f))
        pd.testing.assert_frame_equal(ref, pd.read_parquet(tmp_path / "c" / f))
    # batches draw distinct randomness: no two parts alike
    first = pd.read_parquet(tmp_path / "a" / files[1]).drop(columns="row")
    assert not first.equals(pd.read_parquet(tmp_path / "a" / files[2]).drop(columns="row"))
    # the types sample() writes to Parquet
    write_table(syn.sample(10), tmp_path / "one.parquet")
    pd.testing.assert_series_equal(out.dtypes, pd.read_parquet(tmp_path / "one.parquet").dtypes)
    # and the Arrow types both writers store: text as `string`, not pandas 3's large_string
    import pyarrow as pa
    import pyarrow.parquet as pq
    types = [[f.type for f in pq.read_schema(p)] for p in (tmp_path / "a" / files[0],
                                                           tmp_path / "one.parquet")]
    assert types[0] == types[1] and pa.string() in types[0]
    assert pa.large_string() not in types[0]


def _target_tvd(syn, out: pd.DataFrame, n: int) -> float:
    """Mean TVD of the output to the fitted targets, in the fitted (merged) codes."""
    be = get_backend("cpu")
    codes = encode(out, syn.model.schema)
    for a, r in syn.model.recodes.items():
        codes[a] = r.apply(np, codes[a])
    return float(np.mean([np.abs(be.histogram(codes, attrs, shape) / n - t / t.sum()).sum() / 2
                          for attrs, shape, t in syn.model.targets(n)]))


def test_union_of_batches_fits_the_targets_as_one_batch_does(client, table, tmp_path):
    # 4 batches of 10^5 rows against one of 4 * 10^5 (at 10^4 rows a batch the union
    # measured 1.2-1.3 times one batch's TVD: smaller batches fit less closely)
    df, schema = table
    syn = Synthesizer(1.0, 1e-9, **{**KW, "seed": 0, "iterations": 20}).fit(df, schema)
    syn.client = client
    n = 400_000
    syn.sample_to(tmp_path / "one", n, batch_rows=n)
    syn.sample_to(tmp_path / "four", n, batch_rows=n // 4)
    one = _target_tvd(syn, pd.read_parquet(tmp_path / "one"), n)
    four = _target_tvd(syn, pd.read_parquet(tmp_path / "four"), n)
    assert four <= 1.1 * one, (four, one)


def test_a_task_that_fails_once_is_retried_and_the_output_is_exact(client, table, tmp_path,
                                                                   monkeypatch):
    import pyarrow.parquet as pq
    df, schema = table
    syn = Synthesizer(1.0, 1e-9, **KW).fit(df, schema)
    syn.sample_to(tmp_path / "ref", 12_000, batch_rows=4000)  # call words 0..2
    real, failed = pq.write_table, []

    def flaky(table, where, **kw):  # part 1 dies half-written, once
        if "part-00001" in str(where) and not failed:
            failed.append(where)
            with open(where, "wb") as f:
                f.write(b"PAR1 half a file")
            raise OSError("disk went away")
        return real(table, where, **kw)
    monkeypatch.setattr(pq, "write_table", flaky)
    syn = Synthesizer(1.0, 1e-9, client=client, **KW).fit(df, schema)
    res = syn.sample_to(tmp_path / "out", 12_000, batch_rows=4000)
    assert failed and res["rows"] == 12_000
    assert sorted(os.listdir(tmp_path / "out")) == sorted(os.listdir(tmp_path / "ref"))
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out"),
                                  pd.read_parquet(tmp_path / "ref"))


def test_default_batches_keep_every_worker_busy_within_its_memory(client, table):
    from gpu_dpsyn.distributed import sampling
    df, schema = table
    syn = Synthesizer(1.0, 1e-9, client=client, **KW).fit(df, schema)
    assert sampling.default_batch_rows(syn.model, client, 10 ** 6) == 500_000  # 2 threads, a batch each
    assert sampling.default_batch_rows(syn.model, client, 100_000) == 100_000  # too small to split
    limit = min(w["host"] for w in client.run(sampling.worker_memory, "cpu").values())
    rows = sampling.default_batch_rows(syn.model, client, 2 * 10 ** 9)
    per_row = 64 + 48 * len(syn.model.schema.columns) + sum(1 for _ in syn.model.domain)  # uint8 codes
    assert len(batch_sizes(2 * 10 ** 9, rows)) % 2 == 0  # as many batches per worker
    assert rows * per_row <= sampling.MEMORY_SHARE * limit
    assert rows <= sampling.MAX_BATCH_ROWS


def test_split_is_exact_per_batch_and_per_cell():
    r = np.random.default_rng(5)
    for cells, n, rows in [(1, 7, 3), (50, 1000, 300), (997, 123_457, 10_000), (6, 5, 1)]:
        t = r.gamma(0.3, 1.0, cells)
        t = t * n / t.sum()
        sizes = batch_sizes(n, rows)
        assert sum(sizes) == n and max(sizes) - min(sizes) <= 1 and max(sizes) <= rows
        whole = integer_target(t, n)
        got = np.array([b[0][2] for b in split_targets([((0,), (cells,), t)], sizes)])
        assert (got >= 0).all()
        assert np.array_equal(got.sum(axis=0), whole)  # each cell over all batches
        assert np.array_equal(got.sum(axis=1), sizes)  # each batch's size
        # every share within one of the cell's proportional part
        assert np.abs(got - np.outer(sizes, whole) / n).max() < 1


def test_refusals_come_before_the_first_charge(client, table, parts, tmp_path):
    df, schema = table
    syn = Synthesizer(1.0, 1e-9, client=client, **KW)
    with pytest.raises(DPSynError, match="no table file"):
        syn.fit(str(tmp_path / "nothing*.parquet"), schema)
    bad = tmp_path / "bad"
    bad.mkdir()
    df.iloc[:100].to_parquet(bad / "a.parquet")
    df.iloc[100:200].assign(month=13).to_parquet(bad / "b.parquet")
    strict = Synthesizer(1.0, 1e-9, client=client, on_invalid="error", **KW)
    with pytest.raises(DataError, match=r"partition 1: column 'month' has 100 values outside"):
        strict.fit(str(bad), schema)  # (the default repairs them: below)
    assert strict.ledger == []
    (tmp_path / "text").mkdir()
    df.iloc[:50].assign(distance="far").to_csv(tmp_path / "text" / "a.csv", index=False)
    with pytest.raises(DataError, match=r"^cannot read '.*a\.csv' as a table: .*'far'"):
        strict.fit(str(tmp_path / "text"), schema)
    df.iloc[:10].to_csv(bad / "c.csv")
    with pytest.raises(DPSynError, match="mixes CSV and Parquet"):
        syn.fit(str(bad), schema)
    with pytest.raises(DataError, match="missing from the data"):
        syn.fit(str(parts / "pq"), {"columns": {**schema["columns"], "x": schema["columns"]
                                                ["month"]}})
    ids = {"columns": {**schema["columns"], "who": {"type": "id"}}}
    # said for the command line too, where "in memory" is a run without --workers (a probe)
    with pytest.raises(DPSynError, match="individual id column .*not done on Dask.*leave "
                                         "out --workers and --scheduler"):
        syn.fit(str(parts / "pq"), ids)
    assert syn.ledger == []
    import gpu_dpsyn.synthesizer as api  # no client named and none current
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(api, "current_client", lambda: None)
        with pytest.raises(DPSynError, match="reads it on Dask workers"):
            Synthesizer(1.0, 1e-9, **KW).fit(str(parts / "pq"), schema)
    syn.fit(str(parts / "pq"), schema)  # nothing was spent: the same object may fit
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(DPSynError, match="is not empty"):
        syn.sample_to(tmp_path / "full", 100)
    assert os.listdir(tmp_path / "full") == ["x"]
    with pytest.raises(DataError, match="number of rows"):
        syn.sample_to(tmp_path / "new", 0)


def test_cli_on_a_local_cluster(table, parts, tmp_path, capsys):
    df, schema = table
    s = tmp_path / "s.json"
    load_schema(schema).save(s)
    args = ["synthesize", str(parts / "pq" / "*.parquet"), "--schema", str(s), "--epsilon",
            "1", "--delta", "1e-9", "--seed", "3", "--iterations", "4", "--quiet"]
    rc = main(args + ["--out", str(tmp_path / "out"), "--workers", "2", "--rows", "5000",
                      "--batch-rows", "2000", "--ledger", str(tmp_path / "l.json")])
    assert rc == 0, capsys.readouterr().err
    assert "wrote 5,000 synthetic rows" in capsys.readouterr().err
    assert len(os.listdir(tmp_path / "out")) == 3
    assert len(pd.read_parquet(tmp_path / "out")) == 5000
    led = json.loads((tmp_path / "l.json").read_text())
    ref = Synthesizer(1.0, 1e-9, seed=3, progress=False).fit(df, schema).privacy_report()
    assert led.pop("table") == {"file": "out", "rows": 5000}  # the release it goes with
    assert {k: v for k, v in led.items() if k != "gum_history"} == json.loads(json.dumps(ref))
    for extra, msg in [(["--workers", "0"], "--workers must be an integer >= 1"),
                       (["--workers", "2", "--scheduler", "tcp://x:1"], "not both"),
                       (["--workers", "2", "--reader", "cudf"], "--reader cudf"),
                       (["--batch-rows", "10"], "--batch-rows is for"),
                       (["--workers", "1", "--ledger", str(tmp_path / "o2" / "l.json")],
                        "is inside --out")]:
        rc = main(args + ["--out", str(tmp_path / "o2")] + extra)
        err = capsys.readouterr().err
        assert rc == 2 and msg in err and err.count("\n") == 1, err
    rc = main(args + ["--out", str(tmp_path / "out"), "--workers", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and "is not empty" in err
    rc = main(args[:1] + [str(tmp_path / "no*.csv")] + args[2:] + ["--out", str(tmp_path / "o3"),
                                                                  "--workers", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and "no table file there" in err and not (tmp_path / "o3").exists()


def test_cli_names_an_unreachable_scheduler(parts, tmp_path, capsys, monkeypatch):
    from gpu_dpsyn.distributed import cluster
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    s = tmp_path / "s.json"
    load_schema({"columns": {"month": {"type": "numeric", "integer": True, "min": 1,
                                       "max": 12}}}).save(s)
    rc = main(["synthesize", str(parts / "pq"), "--schema", str(s), "--epsilon", "1",
               "--delta", "1e-9", "--out", str(tmp_path / "out"), "--scheduler",
               "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("gpu-dpsyn: error: cannot connect to the Dask "
                                      "scheduler 'tcp://127.0.0.1:9'") and err.count("\n") == 1


class _DieOnce(dask_distributed.WorkerPlugin):
    """Worker plugin: the worker process writing part 1 dies halfway, the first time."""

    def __init__(self, marker):
        self.marker = marker

    def setup(self, worker):
        import pyarrow.parquet as pq
        real, marker = pq.write_table, self.marker

        def dying(table, where, **kw):
            if "part-00001" in str(where) and not os.path.exists(marker):
                open(marker, "w").close()
                with open(where, "wb") as f:
                    f.write(b"PAR1 half a file")
                os._exit(1)
            return real(table, where, **kw)
        pq.write_table = dying


@pytest.mark.slow
def test_a_lost_worker_has_its_batch_recomputed(table, tmp_path, monkeypatch):
    import cloudpickle
    from dask.distributed import Client, LocalCluster

    import gpu_dpsyn.synthesizer as api
    df, schema = table
    with monkeypatch.context() as mp:  # the reference in this process, whatever client
        mp.setattr(api, "current_client", lambda: None)  # another test left current
        Synthesizer(1.0, 1e-9, **KW).fit(df, schema).sample_to(tmp_path / "ref", 9000,
                                                               batch_rows=3000)
    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)  # worker processes cannot import tests/
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as c:
            c.register_plugin(_DieOnce(str(tmp_path / "died")))
            syn = Synthesizer(1.0, 1e-9, client=c, **KW).fit(df, schema)
            res = syn.sample_to(tmp_path / "out", 9000, batch_rows=3000)
    finally:
        cloudpickle.unregister_pickle_by_value(module)
    assert (tmp_path / "died").exists() and res["rows"] == 9000
    assert sorted(os.listdir(tmp_path / "out")) == sorted(os.listdir(tmp_path / "ref"))
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out"),
                                  pd.read_parquet(tmp_path / "ref"))


def test_the_current_dask_client_is_picked_up(client, table, parts, tmp_path):
    """Without client=, a Dask user's current client reads a distributed input and runs
    sample_to's batches, as Dask does; the same result as naming it."""
    df, schema = table
    named = Synthesizer(1.0, 1e-9, client=client, **KW).fit(str(parts / "pq"), schema)
    with client.as_current():
        found = Synthesizer(1.0, 1e-9, **KW).fit(str(parts / "pq"), schema)
        res = found.sample_to(tmp_path / "out", 2000, batch_rows=1000)
    _same_fit(named, found)
    assert res["batches"] == 2 and res["rows"] == 2000


def test_partitions_are_repaired_by_the_same_row_local_rule(client, table, tmp_path):
    # a partition with values outside the schema: repaired as in memory, not refused
    df, schema = table
    d = tmp_path / "p"
    d.mkdir()
    df.iloc[:100].to_parquet(d / "a.parquet")
    bad = df.iloc[100:200].assign(month=13)
    bad.to_parquet(d / "b.parquet")
    on_dask = Synthesizer(1.0, 1e-9, client=client, **KW).fit(str(d), schema)
    whole = pd.concat([df.iloc[:100], bad], ignore_index=True)
    in_memory = Synthesizer(1.0, 1e-9, **KW).fit(whole, schema)
    _same_fit(on_dask, in_memory)
    # a CSV cell that is no number: repaired in its partition, not a failed read
    (tmp_path / "text").mkdir()
    df.iloc[:50].to_csv(tmp_path / "text" / "a.csv", index=False)
    df.iloc[50:60].assign(distance="far").to_csv(tmp_path / "text" / "b.csv", index=False)
    on_dask = Synthesizer(1.0, 1e-9, client=client, **KW).fit(str(tmp_path / "text"), schema)
    in_memory = Synthesizer(1.0, 1e-9, **KW).fit(
        pd.concat([df.iloc[:50], df.iloc[50:60].assign(distance="far")]), schema)
    _same_fit(on_dask, in_memory)


def test_an_id_column_on_dask_is_refused_with_the_way_out(client, table, tmp_path):
    df, schema = table
    d = tmp_path / "ids"
    d.mkdir()
    df.iloc[:300].assign(who=np.arange(300)).to_parquet(d / "a.parquet")
    with_id = {"columns": {**schema["columns"], "who": {"type": "id"}}}
    syn = Synthesizer(1.0, 1e-9, client=client, **KW)
    with pytest.raises(DPSynError, match="drop the id column from both the schema and the "
                                         "table"):
        syn.fit(str(d), with_id)
    with pytest.raises(DataError, match=r"not in the schema: \['who'\] \(add them to the "
                                        r"schema, list them in its \"ignored_columns\""):
        syn.fit(str(d), schema)  # the schema without it, the data still with it
    assert syn.ledger == []
    (d / "a.parquet").unlink()
    df.iloc[:300].to_parquet(d / "a.parquet")
    assert syn.fit(str(d), schema).ledger


def test_each_sample_to_sends_the_model_under_a_key_of_its_own(client, table, tmp_path,
                                                                monkeypatch):
    """Keyed by content, two sample_to calls of one model shared a key, and when the first
    call's copy was released the second lost it mid-run (FuturesCancelledError, "failed to
    acquire keys", seen once in the full suite): each call's key is its own."""
    df, schema = table
    syn = Synthesizer(1.0, 1e-9, **KW).fit(df, schema)
    syn.client = client
    keys, real = [], client.scatter

    def spy(data, *a, **k):
        out = real(data, *a, **k)
        keys.append(out.key)
        return out
    monkeypatch.setattr(client, "scatter", spy)
    syn.sample_to(tmp_path / "a", 4000, batch_rows=2000)
    syn.sample_to(tmp_path / "b", 4000, batch_rows=2000)
    assert len(keys) == 2 and keys[0] != keys[1]


def test_an_occupied_output_directory_is_named_with_what_it_holds(tmp_path):
    # a leftover hidden part (an interrupted run's .part-*.tmp) made a directory that ls
    # shows empty 'not empty' without a word of what it held (a probe)
    from gpu_dpsyn.distributed.sampling import check_output_dir
    out = tmp_path / "o"
    out.mkdir()
    (out / ".part-00003.parquet.1a2b.tmp").write_text("")
    with pytest.raises(DPSynError, match=r"not empty.*\.part-00003\.parquet\.1a2b\.tmp"):
        check_output_dir(out)


def test_more_local_workers_than_cores_is_refused_before_any_start(monkeypatch):
    # --workers 200 on a 2-core machine started 200 processes (a probe)
    import os
    from gpu_dpsyn.distributed import cluster
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with pytest.raises(DPSynError, match=r"--workers 200.*2 cores"):
        cluster.local_cluster(200)
