"""Scale-out on Dask (LocalCluster, 2 in-process workers, NumPy backend): the same noisy
marginals and ledger as in memory."""

import numpy as np
import pandas as pd
import pytest

dask_distributed = pytest.importorskip("dask.distributed")

from conftest import _flights, FLIGHTS_SCHEMA  # noqa: E402
from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.errors import DataError, DPSynError  # noqa: E402
from gpu_dpsyn.ingest import read_table  # noqa: E402
from gpu_dpsyn.schema import load_schema  # noqa: E402

COLS = ["month", "dep_delay", "carrier", "origin", "distance", "sched_dep_time", "dest"]
KW = dict(seed=3, iterations=8, progress=False, backend="cpu")


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        yield c


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
    assert len(a.marginals) == len(b.marginals)
    for x, y in zip(a.marginals, b.marginals):
        assert x.attrs == y.attrs and np.array_equal(x.values, y.values)  # to the bit
    assert a.recodes.keys() == b.recodes.keys()
    assert all(np.array_equal(a.recodes[k].lut, b.recodes[k].lut) for k in a.recodes)
    assert a.n_estimate == b.n_estimate


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
        assert local.recodes  # low-count merging ran, on every partition too


def test_refusals_come_before_the_first_charge(client, table, parts, tmp_path):
    df, schema = table
    syn = Synthesizer(1.0, 1e-9, client=client, **KW)
    with pytest.raises(DPSynError, match="no table file"):
        syn.fit(str(tmp_path / "nothing*.parquet"), schema)
    bad = tmp_path / "bad"
    bad.mkdir()
    df.iloc[:100].to_parquet(bad / "a.parquet")
    df.iloc[100:200].assign(month=13).to_parquet(bad / "b.parquet")
    with pytest.raises(DataError, match=r"partition 1: column 'month' has 100 values outside"):
        syn.fit(str(bad), schema)
    (tmp_path / "text").mkdir()
    df.iloc[:50].assign(distance="far").to_csv(tmp_path / "text" / "a.csv", index=False)
    with pytest.raises(DataError, match=r"^cannot read the table: .*'far'"):
        syn.fit(str(tmp_path / "text"), schema)
    df.iloc[:10].to_csv(bad / "c.csv")
    with pytest.raises(DPSynError, match="mixes CSV and Parquet"):
        syn.fit(str(bad), schema)
    with pytest.raises(DataError, match="missing from the data"):
        syn.fit(str(parts / "pq"), {"columns": {**schema["columns"], "x": schema["columns"]
                                                ["month"]}})
    ids = {"columns": {**schema["columns"], "who": {"type": "id"}}}
    with pytest.raises(DPSynError, match="individual id column .*not done on Dask"):
        syn.fit(str(parts / "pq"), ids)
    assert syn.ledger == []
    with pytest.raises(DPSynError, match="reads it on Dask workers"):
        Synthesizer(1.0, 1e-9, **KW).fit(str(parts / "pq"), schema)
    syn.fit(str(parts / "pq"), schema)  # nothing was spent: the same object may fit
