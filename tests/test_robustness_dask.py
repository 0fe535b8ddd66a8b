"""The Dask path: a large request list reaches every partition as itself (distributed keys
a keyword argument over 100 kB by its name, so two of them collided and the second pass
hung), every gather has a timeout, and a damaged compressed part is one line."""
import gzip
import itertools
import threading

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.distributed")

from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.backends import get_backend  # noqa: E402
from gpu_dpsyn.data.encoding import encode  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402
from gpu_dpsyn.distributed import counting  # noqa: E402
from gpu_dpsyn.errors import DataError, DPSynError  # noqa: E402

COLUMNS = 21
ROWS = 20000


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    """21 columns of 3 values, 20,000 rows, as four Parquet files."""
    r = np.random.default_rng(0)
    df = pd.DataFrame({f"c{i:02d}": r.integers(0, 3, ROWS) for i in range(COLUMNS)})
    schema = {"columns": {c: {"type": "categorical", "values": [0, 1, 2]} for c in df}}
    d = tmp_path_factory.mktemp("wide")
    for i, lo in enumerate(range(0, ROWS, 5000)):
        df.iloc[lo:lo + 5000].to_parquet(d / f"p{i}.parquet")
    return df, schema, str(d / "*.parquet")


def _in_time(fn, seconds=60):
    """fn()'s result, or a failure if it takes longer (it used to hang forever)."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # handed to the test
            out["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        pytest.fail(f"no result in {seconds} s: the Dask tasks hang")
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_two_large_request_lists_are_counted_each_as_itself(client, wide):
    from dask.sizeof import sizeof
    df, schema, path = wide
    s = load_schema(schema)
    counts = counting.dask_counts(client, path, s, "cpu")
    triples = [((a, b, c), (3, 3, 3)) for a, b, c in itertools.combinations(range(COLUMNS), 3)]
    first, second = triples[:700], triples[700:]
    assert sizeof(first) > 1e5 and sizeof(second) > 1e5  # past distributed's inline limit
    be, codes = get_backend("cpu"), encode(df, s)
    for reqs in (first, second):
        got = _in_time(lambda: list(counts.histograms(reqs)))
        assert len(got) == len(reqs)
        for (attrs, shape), h in zip(reqs, got):
            assert np.array_equal(h, be.histogram(codes, attrs, shape).astype(np.int64))


def test_a_wide_table_fits_on_dask_as_in_memory(client, wide):
    df, schema, path = wide
    kw = dict(seed=1, iterations=2, progress=False, backend="cpu", adaptive_rounds=1)
    local = Synthesizer(1.0, 1e-9, **kw).fit(df, schema)
    dist = _in_time(lambda: Synthesizer(1.0, 1e-9, client=client, **kw).fit(path, schema),
                    120)
    assert local.privacy_report() == dist.privacy_report()
    for x, y in zip(local.model.marginals, dist.model.marginals):
        assert x.attrs == y.attrs and np.array_equal(x.values, y.values)


def test_a_gather_that_gets_no_result_times_out_with_a_clear_error(client, monkeypatch):
    import time
    from gpu_dpsyn.distributed import cluster
    monkeypatch.setattr(cluster, "TIMEOUT_S", 0.5)
    fut = client.submit(time.sleep, 5, pure=False)
    t0 = time.perf_counter()
    with pytest.raises(DPSynError) as e:
        counting.gather(client, [fut])
    assert time.perf_counter() - t0 < 4
    msg = str(e.value)
    assert "\n" not in msg and "0.5 s" in msg and "Dask" in msg, msg
    fut.cancel()


def test_a_damaged_compressed_part_is_a_one_line_data_error(client, wide, tmp_path):
    df, schema, _ = wide
    good = gzip.compress(df.iloc[:100].to_csv(index=False).encode())
    (tmp_path / "a.csv.gz").write_bytes(good)
    (tmp_path / "b.csv.gz").write_bytes(good[:len(good) // 2])  # truncated
    with pytest.raises(DataError) as e:
        counting.dask_counts(client, str(tmp_path), load_schema(schema), "cpu")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("cannot read") and "b.csv.gz" in msg, msg
