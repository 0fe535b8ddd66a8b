"""sample(n): records fitted level by level, then decoded to a table; and the checks that
refuse a size before anything is allocated.  Post-processing: a fitted model can be
sampled any number of times at no privacy cost."""
from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from gpu_dpsyn.core import rng
from gpu_dpsyn.core.progress import step
from gpu_dpsyn.core.types import code_dtype
from gpu_dpsyn.data.dtypes import MAX_ROWS
from gpu_dpsyn.errors import DataError, RowCountWarning
from gpu_dpsyn.estimate.filtering import undo
from gpu_dpsyn.generate.decode import decode, decode_numeric_on, on_device
from gpu_dpsyn.generate.gum import plan_structure
from gpu_dpsyn.generate.records import SampleRun, fit_level, init_records

# device bytes per row beside the codes: GUM's sort keys, order, removed slots and cell
# index; the Gibbs sweep's contexts, orders and ranks (gibbs.systematic_positions)
WORK_BYTES_PER_ROW = 80
# host bytes per row and column besides the codes and work arrays: the decoded table and
# the writer's copy of it.  Sample + write of flights columns on the command line peaked
# at 157-268 bytes a row above the fitted process for 5 columns, 335-670 for 15 (2 and
# 5 * 10^5 rows, Parquet and CSV; CSV the larger): codes + 80 + 48 a column is 1.2 times
# the worst of each
OUTPUT_BYTES_PER_CELL = 48
GROUP_BYTES_PER_ROW = 16  # a grouped level's group code column and its int64 build
COUNT_RELATIVE_SE = 0.1  # warn when the row count's standard error passes this share


def generate(backend, model, n: int, targets, call: int, plan=plan_structure
             ) -> tuple[pd.DataFrame, SampleRun]:
    """n records fitted to targets ((attrs, shape, counts summing to n)) by GUM, then
    decoded; the RNG streams are keyed by the model's seed and `call`.  targets=None:
    every level's, at n, level l's GUM with call + l (a grouped fit reserves one call
    per level).  plan: records.fit_level's.  Returns the table and the run's record."""
    key = rng.split_key(model.seed)
    run = SampleRun(label="sample")
    t0 = time.perf_counter()
    cols = init_records(backend, model, n, key, call)
    steps = [(model.levels[0], targets)] if targets is not None else \
        [(lv, model.targets(n, lv)) for lv in model.levels]
    for i, (lv, tg) in enumerate(steps):
        cols = fit_level(backend, model, cols, lv, tg, key, call + i,
                         model.public is not None or i > 0, run, plan=plan)
    backend.synchronize()
    t1 = time.perf_counter()
    with step(model.settings.progress, f"sample: decode {n:,} rows"):
        decoded = device_decoded(backend, model, cols, key, call)
        codes = [None if j in decoded else backend.to_numpy(c)
                 for c, j in zip(cols, model.schema.synth_indices)]
        for a, r in model.recodes.items():
            codes[a] = undo(codes[a], r, key, call)
        out = decode(codes, model.schema, model.seed, call, model.settings.numeric_decode,
                     lambda j, m: backend.to_numpy(backend.uniforms(key, m, j, rng.DECODE,
                                                                    call)), decoded)
    # gum: the records' whole fit; shuffle, sweep, polish: those steps' part of it
    run.timings.update(gum=t1 - t0, decode=time.perf_counter() - t1)
    return out, run


def device_decoded(backend, model, cols, key, call: int) -> dict:
    """On a device, its numeric columns decoded there (decode.decode_numeric_on), as
    {schema index: host values}; a recoded column (merged values, undone on the host) and
    the NumPy backend decode in decode() itself."""
    if backend.xp is np:
        return {}
    midpoint = model.settings.numeric_decode == "midpoint"
    synth = model.schema.synth_columns  # (a hidden time of day is no schema column)
    return {j: decode_numeric_on(backend, cols[a], synth[a], j, key, call, midpoint)
            for a, j in enumerate(model.schema.synth_indices)
            if a not in model.recodes and on_device(synth[a], midpoint)}


def row_count(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_ROWS:
        raise DataError(f"number of rows must be an integer in [1, {MAX_ROWS}], got {n!r}")
    return int(n)


def check_memory(backend, n: int, domain, grouped: bool, what: str | None = None,
                 instead: str = "ask for fewer rows", decoded: bool = True) -> None:
    """Refuse a sample that cannot fit, before allocating it: on the host, its decoded
    table and the write too (a GPU holds only the codes and work arrays; records fitted
    but never decoded, the adaptive rounds', decoded=False, none either)."""
    need = n * (sum(code_dtype(d).itemsize for d in domain) + WORK_BYTES_PER_ROW
                + (GROUP_BYTES_PER_ROW if grouped else 0)
                + (OUTPUT_BYTES_PER_CELL * len(domain)
                   if decoded and backend.name != "gpu" else 0))
    free = backend.free_memory()
    if free is not None and need > free:
        raise DataError(f"{what or f'sample({n:,})'} needs about {_size(need)} of "
                        f"{backend.name.upper()} memory, only {_size(free)} is free; "
                        f"{instead}")


def _size(nbytes: float) -> str:
    """Bytes for a message: GiB from 1 GiB, MiB below (0.0 GiB says nothing)."""
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.1f} MiB"


def estimated_rows(model, check) -> int:
    """The DP estimate of the row count, with a warning when the noise makes it
    unreliable and an error naming it when check(n) refuses it."""
    n, se = model.n_estimate, model.n_standard_error
    # at the public maximum the count was clamped to it, as the fit said: not estimated
    if se > COUNT_RELATIVE_SE * n and n < model.schema.row_cap:
        warnings.warn(f"the row count is estimated at {n:,} with a standard error of "
                      f"about {se:,.0f} from the privacy noise; choose the size with "
                      "sample(n) (--rows N). If the table has many more rows, the schema's "
                      "rule may have dropped them: gpu-dpsyn check TABLE --schema SCHEMA "
                      "shows what it drops", RowCountWarning, stacklevel=3)
    try:
        return check(n)
    except DataError as e:
        raise DataError(f"the row count is estimated at {n:,} (standard error about "
                        f"{se:,.0f}): {e}; choose the size with sample(n) (--rows N)") \
            from None
