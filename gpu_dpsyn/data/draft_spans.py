"""Numbers fixed by others of their record, said on their draft lines (data.inference):
the time between two dates (a length of stay in days beside admission and discharge, a
trip's minutes beside pickup and drop-off), or the sum of two numbers up to a constant
(a taxi's total: fare + tip + 3.00 of fixed charges).  No column type derives one, and
measured apart the synthetic rows break the rule (at eps 1: a hospital's los_days was its
discharge less its admission, in calendar days, on 8% of the synthetic rows; a taxi's
total was fare + tip + 3 on 1%).  Read off the private data, as every draft is: NOT
private."""
from __future__ import annotations

import numpy as np
import pandas as pd

from gpu_dpsyn.data.text import leaving_out
from gpu_dpsyn.data.types import missing
from gpu_dpsyn.data.types.datetime import to_epoch
from gpu_dpsyn.errors import DataError

UNITS = (("days", 86400), ("hours", 3600), ("minutes", 60), ("seconds", 1))
MIN_ROWS = 50  # records holding all three, so that the rule is no chance
MIN_VALUES = 3  # distinct numbers: not a flag
_NS = 10 ** 9


def spans(data: dict, cols: list, whys: list, finest: dict) -> None:
    """Add to the line (whys, in place) of each numeric column of cols that is, in every
    record where it and two datetime columns are present, the time from one to the other
    in whole or rounded days (calendar days too), hours, minutes or seconds (within one
    unit), a note naming them and the edit leaving it out.  data: each column's values by
    name; finest: each datetime column's finest unit in the data."""
    times = {}
    for c in cols:
        if c.kind == "datetime" and finest.get(c.name) is not None:
            try:  # as the drafted column reads them (its layout, its zone)
                times[c.name] = to_epoch(missing.blank(data[c.name], c)[0], c)
            except DataError:
                continue
    if len(times) < 2:
        return
    for i, c in enumerate(cols):
        x = _numbers(data[c.name]) if _numeric(c) else None
        if x is None:
            continue
        said = next((f"; it is the {unit} from {a!r} to {b!r} in every record (a length of "
                     "stay, a duration?): measured apart from them, synthetic rows break "
                     f"the rule; leave it out (gpu-dpsyn schema FILE {leaving_out(c.name)}) "
                     "and compute it from the released dates"
                     for a in times for b in times if a != b
                     for unit in [_unit(x, times[a], times[b])] if unit), None)
        if said:
            whys[i] += said


SAMPLE = 2048  # records a candidate sum is tried on before the whole column


def sums(data: dict, cols: list, whys: list) -> None:
    """Add to the line (whys, in place) of each number column of cols that is the sum of
    two others plus a constant in every record where the three are present (within the
    rounding of their decimals), a note naming them and the edit leaving it out."""
    nums = {}
    for c in cols:
        x = _numbers(data[c.name]) if _numeric(c) else None
        if x is not None:
            nums[c.name] = (x, getattr(c, "decimals", None))
    names = list(nums)
    screen = _Screen([nums[n] for n in names])
    for i, c in enumerate(cols):
        if c.name not in nums:
            continue
        x = nums[c.name][0]
        for a, b in screen.pairs(names.index(c.name), names):
            k = _constant(x, nums[a][0], nums[b][0], [nums[n][1] for n in (c.name, a, b)])
            if k is not None:
                shift = "" if k == 0 else f" {'+' if k > 0 else '-'} {abs(k):g}"
                whys[i] += (f"; it is {a!r} + {b!r}{shift} in every record (a total?): "
                            "measured apart from them, synthetic rows break the rule; leave "
                            f"it out (gpu-dpsyn schema FILE {leaving_out(c.name)}) and "
                            "compute it from the released columns")
                break


SCREEN_ROWS = 32  # of the first SAMPLE records: each pair tried on them all at once
BLOCK = 1 << 22  # values of x - a - b screened at once (32 MiB)


class _Screen:
    """The pairs (a, b) of number columns, in sums' order, that x = a + b + k may hold
    for: those whose x - a - b spans no more on a few of the first records than any
    sum's tolerance (_constant) allows, each pair of the rest being refuted there.  One
    array operation a column, not _constant over every pair (cubic in the columns: 80
    took 11 s of a 12 s draft, 300 would take some ten minutes); _constant then decides
    on the few left, so the same sums are said."""

    def __init__(self, nums: list):
        n = min(len(x) for x, _ in nums) if nums else 0
        rows = np.unique(np.linspace(0, min(n, SAMPLE) - 1, SCREEN_ROWS).astype(int)) \
            if n else np.zeros(0, dtype=int)
        self.m = np.array([x[rows] for x, _ in nums]).reshape(len(nums), len(rows))
        places = [d for _, d in nums if d is not None]
        most = max((float(np.nanmax(np.abs(x))) for x, _ in nums), default=1.0)
        # the largest tolerance _constant may apply to any three, on any records
        self.tol = max(1.5 * 10.0 ** -min(places) if places else 0.0,
                       1e-9 * max(1.0, most))

    def pairs(self, i: int, names: list):
        """The pairs (a, b), a before b in names, neither column i, not refuted."""
        m = self.m
        step = max(1, BLOCK // max(1, m.size))  # columns a at once: bounded memory
        for lo in range(0, len(m), step):
            r = m[i] - m[lo:lo + step, None, :] - m[None, :, :]  # x - a - b, as _constant
            with np.errstate(invalid="ignore"):
                span = np.fmax.reduce(r, axis=2, initial=-np.inf) - \
                    np.fmin.reduce(r, axis=2, initial=np.inf)  # (no record: -inf)
            ok = ~(span > self.tol)
            ok[:, i] = False
            for j, k in zip(*np.nonzero(ok)):
                if i != lo + j < k:
                    yield names[lo + j], names[k]


def _numeric(c) -> bool:
    """A drafted column of numbers: numeric, or categorical listing numbers only (parsing
    text columns as numbers was most of the time: 2 s of flights' 10)."""
    return c.kind == "numeric" or c.kind == "categorical" and bool(c.values) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in c.values)


def _numbers(values) -> np.ndarray | None:
    """A column's values as floats (NaN where missing), or None: text among them, too
    few, or under MIN_VALUES distinct."""
    codes, uniq = pd.factorize(pd.Series(values))  # text: each distinct value parsed once
    x = np.append(pd.to_numeric(pd.Series(uniq), errors="coerce").to_numpy(np.float64),
                  np.nan)[codes]  # (code -1, missing: the NaN appended)
    ok = np.isfinite(x)
    if ok.sum() < MIN_ROWS or ((codes >= 0) & ~ok).any() or \
            pd.Series(x[ok]).nunique() < MIN_VALUES:
        return None
    return x


def _constant(x, a, b, places) -> float | None:
    """The constant k with x = a + b + k in every record holding the three, within the
    rounding of their decimals (half a unit of the last place each), or None."""
    d = max((p for p in places if p is not None), default=None) or None  # (0: exact)
    for part in (slice(0, SAMPLE), slice(None)):  # the first records, then all
        r = (x[part] - a[part] - b[part])
        r = r[np.isfinite(r)]
        if r.size < MIN_ROWS:
            if part.stop is None:
                return None
            continue
        lo, hi = float(r.min()), float(r.max())
        tol = 1.5 * 10.0 ** -d if d is not None else \
            1e-9 * max(1.0, float(np.nanmax(np.abs(x[part]))))
        if hi - lo > tol:
            return None
    k = (lo + hi) / 2
    return round(k, d) if d is not None else k


def _unit(x: np.ndarray, a: tuple, b: tuple) -> str | None:
    """The unit in which x is the time from a to b (epochs, missing) within one unit on
    every record holding all three, or None."""
    rows = np.isfinite(x) & ~a[1] & ~b[1]
    if rows.sum() < MIN_ROWS:
        return None
    gap = (b[0][rows] - a[0][rows]).astype(np.float64)
    for unit, secs in UNITS:
        if np.all(np.abs(x[rows] - gap / (secs * _NS)) < 1.0):  # (calendar days too)
            return unit
    return None
