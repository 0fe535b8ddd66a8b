"""Synthetic rows as Parquet parts, one batch per Dask task.

GUM is post-processing, so batches need nothing from each other: batch b is fitted to
its exact integer share of every target (splitting.py) by the very code sample() runs
(generate.sample.generate), with the post-processing RNG's call word set to its own value,
and written to part-<b>.parquet.  A task writes to a temporary name, which the client
renames when the task's result comes back, so a part is there whole or not at all, a
task that is run again (a retry, a lost worker) writes the same bytes, nothing is
written twice, and no part lands after sample_to returns (a task the client gave up on,
after an interrupt, still runs to its end on a scheduler's worker).  Temporary files
left (a lost worker's, an abandoned task's) are removed once the batches have ended.
The client only ever holds one batch's targets per task in flight, never rows.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import os
import re
import time
import uuid
from pathlib import Path

import numpy as np

from gpu_dpsyn.core.checks import integer
from gpu_dpsyn.core.types import code_dtype
from gpu_dpsyn.data.dtypes import dictionary_types
from gpu_dpsyn.data.files import probe_directory
from gpu_dpsyn.data.ingest import CSV_SUFFIXES, check_writable
from gpu_dpsyn.data.parquet_types import written_schema
from gpu_dpsyn.generate.decode import decode
from gpu_dpsyn.generate.sample import OUTPUT_BYTES_PER_CELL, WORK_BYTES_PER_ROW, generate
from gpu_dpsyn.errors import ClusterError, DPSynError
from gpu_dpsyn.distributed.cluster import wait_for
from gpu_dpsyn.distributed.splitting import batch_sizes, split_targets
from gpu_dpsyn.distributed.workers import worker_backend, worker_memory

RETRIES = 2  # a task that raises is run again this often (a lost worker's task: always)
# after an interrupt, the longest wait for the batches already running to end (a second
# Ctrl-C ends it sooner): cancelling a task does not stop a worker's thread
STOP_WAIT_S = 60.0
MAX_BATCH_ROWS = 1 << 22
# spreading n over the threads stops at batches this small: the union of 4 batches of
# 10^5 rows fitted the targets within 0.98-1.05 times one batch's TVD, of 10^4 rows 1.2-1.3
MIN_BATCH_ROWS = 1 << 17
MEMORY_SHARE = 0.5  # of a worker's memory limit, split over its threads, for one batch
TMP = re.compile(r"\.part-\d+\.parquet\.[0-9a-f]{32}\.tmp")  # write_batch's temporary names


def check_output_dir(path) -> Path:
    """The output directory: missing (it is created) or empty, its parent a writable
    directory.  Parts of an earlier run would join the union, so an occupied directory is
    refused."""
    if not isinstance(path, (str, os.PathLike)):
        raise DPSynError(f"the output must be a directory path (str or os.PathLike), got "
                         f"{type(path).__name__}")
    p = Path(path)
    if not p.is_dir() and p.name.lower().endswith(CSV_SUFFIXES + (".parquet",)):
        raise DPSynError(f"output {str(p)!r} names a table file, but sample_to (--workers) "
                         "writes a directory of Parquet parts: give a directory name")
    if p.exists():
        if not p.is_dir():
            raise DPSynError(f"output {str(p)!r} exists and is not a directory")
        held = sorted(x.name for x in p.iterdir())
        if held:  # named: a hidden leftover (.part-*.tmp) is one ls does not show
            stray = all(TMP.fullmatch(x) for x in held)
            raise DPSynError(f"output directory {str(p)!r} is not empty (it holds "
                             + ", ".join(map(repr, held[:3]))
                             + (f" and {len(held) - 3:,} more" if len(held) > 3 else "")
                             + ("): temporary parts of an interrupted run; remove them, or"
                                if stray else ");")
                             + " give a new or empty directory")
        if not os.access(p, os.W_OK | os.X_OK):
            raise DPSynError(f"output directory {str(p)!r} is not writable")
        probe_directory(p, f"output directory {str(p)!r}")  # a read-only mount, say
    elif not p.parent.is_dir():
        raise DPSynError(f"output {str(p)!r}: {str(p.parent)!r} is not an existing directory")
    elif not os.access(p.parent, os.W_OK | os.X_OK):
        raise DPSynError(f"output {str(p)!r}: {str(p.parent)!r} is not writable")
    else:
        probe_directory(p.parent, f"output {str(p)!r}")
    return p


def sample_to(model, client, reserve_calls, path, n: int, batch_rows: int | None = None
              ) -> dict:
    """Write n rows of the fitted model under `path` (see Synthesizer.sample_to), on the
    client's workers or in this process; reserve_calls(k): the first of k fresh values
    of the post-processing RNG's call word."""
    out = check_output_dir(path)
    check_writable(model.schema, out / "part.parquet", "sample_to")  # before any batch
    backend = model.settings.backend
    if batch_rows is None:
        batch_rows = default_batch_rows(model, client, n)
    batch_rows = integer("batch_rows", batch_rows, 1)
    sizes = batch_sizes(n, batch_rows)
    first_call = reserve_calls(len(sizes))
    out.mkdir(exist_ok=True)
    width = max(5, len(str(len(sizes) - 1)))
    arrow = arrow_schema(model)
    # the tasks draw no bars (their settings' only difference: no output effect)
    model = dataclasses.replace(model, settings=dataclasses.replace(model.settings,
                                                                    progress=False))
    starts = itertools.accumulate(sizes, initial=1)  # the first id of each batch
    batches = (dict(part=f"part-{b:0{width}d}.parquet", n=size, targets=targets,
                    call=first_call + b, first_id=first)
               for b, (size, first, targets) in enumerate(zip(sizes, starts, split_targets(
                   model.targets(n), sizes))))
    try:
        if client is None:
            done = [write_batch(model, backend, str(out), arrow, **b) for b in batches]
        else:
            done = _run_on(client, model, backend, str(out), arrow, batches)
    finally:  # also after a failure: a lost worker's unfinished part (the directory
        for tmp in out.iterdir():  # was empty at the start: these are ours)
            if TMP.fullmatch(tmp.name):
                tmp.unlink(missing_ok=True)
    rows = sum(d["rows"] for d in done)
    if rows != n:  # never expected: the parts are what the caller gets
        raise DPSynError(f"wrote {rows:,} rows instead of {n:,}")
    done.sort(key=lambda d: d["part"])
    return {"path": str(out), "rows": rows, "batches": len(sizes), "batch_rows": batch_rows,
            "parts": [d["part"] for d in done], "gum_tvd": [d["history"][-1] for d in done],
            "gum_history": done[0]["history"]}


def _run_on(client, model, backend: str, out: str, arrow, batches) -> list:
    """Every batch as a task, at most two per worker thread in flight (their targets
    are the client's only memory of them)."""
    # a key of its own (hash=False): keyed by content, two calls of one model shared it,
    # and the first release took the model the second still needed
    model = client.scatter(model, broadcast=True, hash=False)
    window = 2 * max(1, sum(client.nthreads().values()))
    running = set()

    def submit():
        b = next(batches, None)
        if b is not None:
            running.add(client.submit(write_batch, model, backend, out, arrow, retries=RETRIES,
                                      key=f"gpu-dpsyn-{b['part']}-{uuid.uuid4().hex}",
                                      rename=False, **b))
    for _ in range(window):
        submit()
    done = []
    try:
        while running:
            # a batch at least every TIMEOUT_S, else a clear error instead of a hang
            finished, running = wait_for(list(running), return_when="FIRST_COMPLETED")
            running = set(running)
            for fut in finished:
                d = fut.result()  # a task that failed after its retries raises
                fut.release()
                done.append(publish(out, d))
                submit()
    except ClusterError:  # no result in TIMEOUT_S: not waited for again
        raise
    except Exception:
        # the batches in flight run on whatever the client does: they are let finish, so
        # that none writes after this returns (the CLI then removes the run's parts)
        wait_for(list(running), " (what was charged to the budget stays spent)")
        raise
    except BaseException as stop:  # an interrupt: what has not started never will, and
        keys = [f.key for f in running]  # what runs is waited for (its file goes after)
        client.cancel(list(running))
        left = await_ended(client, keys)
        if left:
            stop.__notes__ = [*getattr(stop, "__notes__", []), (
                f"{left} batch{'es' * (left > 1)} still running on the Dask cluster may yet "
                f"leave a temporary file (.part-*.tmp) in {out}: remove it before reusing "
                "the directory")]
        raise
    return done


def publish(out: str, d: dict) -> dict:
    """A task's part renamed into place by the client (see the module's note)."""
    final = os.path.join(out, d["part"])
    try:
        os.replace(os.path.join(out, d.pop("tmp")), final)
    except OSError as e:
        seen = " (this process must see the workers' output directory, at the same path)" \
            if isinstance(e, FileNotFoundError) else ""
        raise DPSynError(f"cannot write {final}: {e.strerror or e}{seen}") from None
    return d


def await_ended(client, keys, limit: float = STOP_WAIT_S) -> int:
    """Wait, up to `limit` seconds, until no worker holds one of `keys` (cancelled tasks)
    that has yet to end; how many still do (a second interrupt, or a cluster that cannot
    say, ends the wait)."""
    deadline = time.monotonic() + limit
    try:
        while keys:
            keys = sorted({k for held in client.run(_unended, keys=keys).values()
                           for k in held})
            if not keys or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    except (Exception, KeyboardInterrupt):
        pass
    return len(keys)


def _unended(keys, dask_worker=None) -> list:
    """Those of `keys` this worker may still run or is running (a cancelled task's thread
    runs to its end)."""
    keys = set(keys)
    return [k for k, ts in dask_worker.state.tasks.items()
            if k in keys and ts.state not in ("memory", "error", "released", "forgotten")]


def arrow_schema(model):
    """The Arrow schema every part is written with: read off one decoded row, so the
    types follow the schema (dtypes.output_dtype), whatever values a batch holds."""
    import pyarrow as pa
    codes = [np.zeros(1, code_dtype(c.size)) for c in model.schema.synth_columns]
    row = decode(codes, model.schema)
    return written_schema(pa.Schema.from_pandas(row, preserve_index=False), row,
                          dictionary_types(model.schema))


def write_batch(model, backend: str, out: str, arrow, part: str, n: int, targets, call: int,
                first_id: int, rename: bool = True) -> dict:
    """n rows fitted to targets, written to out/part (whole, or not at all); as a task
    (rename=False), to a temporary file named by the result's "tmp", for publish()."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    df, run = generate(worker_backend(backend), model, n, targets, call)
    for col in model.schema.columns:
        if col.kind == "id":  # numbered 1..n over the union, not per batch
            df[col.name] += first_id - 1
    final = os.path.join(out, part)
    tmp = os.path.join(out, f".{part}.{uuid.uuid4().hex}.tmp")
    try:
        pq.write_table(pa.Table.from_pandas(df, schema=arrow, preserve_index=False), tmp)
        if rename:
            os.replace(tmp, final)  # atomic: a rerun replaces the part, never adds one
    except BaseException as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        if isinstance(e, OSError):  # (a full disk: one line, not a worker's traceback)
            raise DPSynError(f"cannot write {final}: {e.strerror or e}") from None
        raise
    return {"part": part, "rows": len(df), "history": run.history,
            **({} if rename else {"tmp": os.path.basename(tmp)})}


def default_batch_rows(model, client, n: int) -> int:
    """Rows per batch from the workers' configured memory (never from what is free now,
    which would change the output from run to run): the fewest batches of at most
    MEMORY_SHARE of the smallest worker's limit (and GPU memory) per thread, rounded down
    to a power of two and to MAX_BATCH_ROWS; then, while batches stay above
    MIN_BATCH_ROWS, a multiple of the cluster's threads, so that each gets as many."""
    backend = model.settings.backend
    code_bytes = sum(code_dtype(d).itemsize for d in model.domain)
    host_row = code_bytes + WORK_BYTES_PER_ROW + OUTPUT_BYTES_PER_CELL * len(model.schema.columns)
    if client is None:
        infos = [worker_memory(backend)]
    else:
        infos = list(client.run(worker_memory, backend).values())
    if not infos:
        raise DPSynError("the Dask cluster has no workers")
    fits = []
    for w in infos:
        fits.append(MEMORY_SHARE * w["host"] / w["threads"] / host_row)
        if w["device"]:
            fits.append(MEMORY_SHARE * w["device"] / w["threads"] /
                        (code_bytes + WORK_BYTES_PER_ROW))
    most = min(MAX_BATCH_ROWS, 1 << max(0, int(math.log2(max(min(fits), 1)))))
    threads = sum(w["threads"] for w in infos)
    batches = -(-n // most)
    even = -(-batches // threads) * threads
    if n // even >= MIN_BATCH_ROWS:
        batches = even
    return -(-n // batches)
