"""Exact counts of a partitioned private table, on Dask workers.

Each partition is read, checked and encoded (encoding.encode) by the worker that reads
it, and its codes stay there.  A histogram request is answered by the backend's own
histogram of every partition, summed exactly in int64 in a tree; only the sums reach
the client, where marginals.measure and selection.measure_indif charge the accountant
and draw the noise as they do in memory.  The counts are the in-memory counts, so the
noisy marginals and the ledger are too.
"""
from __future__ import annotations

import functools
import math
import os
from contextlib import contextmanager

import numpy as np

from gpu_dpsyn.core.checks import column_labels
from gpu_dpsyn.data.dtypes import MAX_ROWS
from gpu_dpsyn.data.encoding import check_columns, encode
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.ingest import READ_ERRORS, malformed
from gpu_dpsyn.errors import DataError, DPSynError
from gpu_dpsyn.distributed.cluster import wait_for
from gpu_dpsyn.distributed.reading import read_partitioned
from gpu_dpsyn.distributed.workers import worker_backend
from gpu_dpsyn.measure.marginals import batches

CHUNK_CELLS = 1 << 22  # counts per reduction pass (32 MiB of int64): bounds task memory
FAN_IN = 8  # partial sums added per reduction task


def dask_counts(client, data, schema, backend: str, on_invalid: str = "error") -> "DaskCounts":
    """Read (a path) or take (a dask DataFrame) the table, encode every partition on the
    workers and check it all: every refusal comes before the caller's first charge.
    on_invalid="repair": each partition under the row-local rule (data/repair.py), and an
    empty table is no refusal."""
    if client is None:
        raise DPSynError("fitting a dask DataFrame or a path reads it on Dask workers: give "
                         "Synthesizer(..., client=dask.distributed.Client(...)), or fit a "
                         "pandas DataFrame")
    check_countable(schema)
    import dask
    # dtypes as pandas reads them; Dask reads a sample on the client to infer them
    with dask.config.set({"dataframe.convert-string": False}), reading_errors():
        ddf = read_partitioned(data, schema, row_local=on_invalid == "repair") \
            if isinstance(data, (str, os.PathLike)) else data
        column_labels(ddf, "the table")
        check_columns(ddf._meta, schema, allow_empty=True)  # the declared columns
        parts = client.compute([dask.delayed(encode_partition)(p, schema, backend, i,
                                                               on_invalid)
                                for i, p in enumerate(ddf.to_delayed())])
    rows = sum(gather(client, client.map(partition_rows, parts)))
    if rows == 0 and on_invalid == "error":
        raise DataError("the table is empty: nothing to synthesize")
    if rows > MAX_ROWS:  # InDif's exact integer sums assume fewer (2 n^2 < 2^63)
        raise DataError(f"the table has {rows:,} rows; at most {MAX_ROWS:,} fit in one "
                        "Synthesizer")
    return DaskCounts(client, parts, backend)


def check_countable(schema) -> None:
    """DPSynError for a schema no Dask fit takes: one with an individual id column.  The
    command line calls it before its cluster starts."""
    if schema.unit_id is not None:
        # bounding keeps a random subset of each individual's records, which needs all of
        # them in one place: not done across partitions
        raise DPSynError(f"the schema has an individual id column ({schema.unit_id!r}): "
                         "contribution bounding is not done on Dask; fit the table in memory "
                         "(a pandas DataFrame; on the command line, leave out --workers and "
                         "--scheduler), or drop the id column from both the schema "
                         "and the table: the noise is then calibrated to the schema's "
                         "max_records_per_individual (1 if unset) records an individual, a "
                         "bound you vouch for, since nothing enforces it")


@contextmanager
def reading_errors():
    """A failure to read the table as one line (DPSynErrors as they are: they name the
    partition)."""
    try:
        yield
    except DPSynError:
        raise
    except READ_ERRORS as e:  # pandas / pyarrow parse and I/O errors, decompressors'
        while e.__cause__ is not None:  # Dask wraps the reader's own error
            e = e.__cause__
        first = (str(e).strip().splitlines() or [type(e).__name__])[0] or type(e).__name__
        said = malformed(first)  # (which file is not known here)
        raise DataError("cannot read the table: " + (
            f"{said} (in one of its files)" if said else first)) from None


def gather(client, futures):
    """client.gather with a timeout: a scheduler or worker that fails without an error
    (a lost worker whose task cannot run again, a graph the scheduler cannot place) is a
    clear error after TIMEOUT_S, not a hang."""
    wait_for(futures, " (what was charged to the budget stays spent)")
    with reading_errors():
        # the first failure in the futures' order: Dask raises one from a set (in hash
        # order), so which of two bad partitions a refusal named changed from run to run
        for f in futures if isinstance(futures, list) else [futures]:
            if f.status == "error":
                raise f.exception()
        return client.gather(futures)


class DaskCounts:
    """A counts source (see marginals.LocalCounts) over encoded partitions on workers."""

    def __init__(self, client, parts: list, backend: str):
        self.client, self.parts, self.backend = client, parts, backend

    def histograms(self, requests):
        """Counts per request, summed over partitions; requests are counted together, up
        to CHUNK_CELLS cells per pass over the partitions."""
        for chunk in batches(requests, CHUNK_CELLS):
            yield from self._count(chunk)

    def _count(self, requests):
        # sent once, as data of its own: distributed turns a keyword argument over 100 kB
        # into a graph node keyed by the argument's name, so two large request lists
        # collided on the key "requests" and the second pass hung
        shared = self._share(requests)
        parts = self.client.map(partition_histograms, self.parts, requests=shared,
                                backend=self.backend)
        total = gather(self.client, tree_sum(self.client, parts))
        ends = np.cumsum([math.prod(shape) for _, shape in requests])
        return np.split(total, ends[:-1])

    def recode(self, attr: int, recode) -> None:
        """Merge low-count values of one column on every partition (filtering.Recode)."""
        self.parts = self.client.map(recode_partition, self.parts, attr=attr,
                                     recode=self._share(recode), backend=self.backend)

    def _share(self, obj):
        """obj as a future of its own, for the tasks of one map to depend on.  Its key is
        unique (hash=False): keyed by content, two fits sending the same requests shared
        one key, and when the first was garbage-collected its release took the data the
        second still needed ("lost dependencies")."""
        return self.client.scatter([obj], hash=False)[0]


def tree_sum(client, futures):
    """One future holding the sum of `futures` (arrays), FAN_IN at a time."""
    while len(futures) > 1:
        futures = [client.submit(_add, *futures[i:i + FAN_IN])
                   for i in range(0, len(futures), FAN_IN)]
    return futures[0]


def _add(*arrays):
    return functools.reduce(np.add, arrays)


# -- tasks (run on workers) --------------------------------------------------------------
def encode_partition(df, schema, backend: str, index: int, on_invalid: str = "error") -> list:
    """One partition's codes (a partition may be empty); errors name the partition.  The
    rule is row-local, so repairing each partition is repairing the table."""
    try:
        if on_invalid == "repair":
            df = repair(df, schema)
        return encode(df, schema, worker_backend(backend).xp, allow_empty=True)
    except DPSynError as e:
        raise type(e)(f"partition {index}: {e}") from None


def partition_rows(codes) -> int:
    return len(codes[0]) if codes else 0


def partition_histograms(codes, requests, backend: str) -> np.ndarray:
    """The backend's exact histogram of each request, concatenated (int64, on the host)."""
    be = worker_backend(backend)
    if partition_rows(codes) == 0:
        return np.zeros(sum(math.prod(shape) for _, shape in requests), dtype=np.int64)
    parts = [be.to_numpy(be.histograms(codes, batch)).astype(np.int64)
             for batch in batches(requests)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def recode_partition(codes, attr: int, recode, backend: str) -> list:
    out = list(codes)  # a new list: the stored partition stays as it was
    out[attr] = recode.apply(worker_backend(backend).xp, out[attr])
    return out
