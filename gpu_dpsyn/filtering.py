"""Filter and combine low-count values (DPSyn): values whose noisy 1-way count is below
theta = 3 sigma are merged into one new value (kept at count 0 if the merged total is
still below theta).  The merged value is decoded back over its members in proportion
to their noisy counts.  Post-processing of the noisy 1-way marginals only."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import rng
from .cpu_fallback.philox import philox4x32, uniform
from .consistency import project_table
from .encoding import code_dtype
from .marginals import Marginal

THETA_SIGMAS = 3.0


@dataclass
class Recode:
    attr: int
    lut: np.ndarray  # old code -> new code
    merged: np.ndarray  # old codes behind the last new code
    merged_p: np.ndarray  # their decode probabilities

    @property
    def size(self) -> int:
        return int(self.lut.max()) + 1

    def apply(self, xp, codes):
        """Old codes -> new codes, on the array module of `codes`."""
        return xp.asarray(self.lut.astype(code_dtype(self.size)))[codes.astype(np.int64)]


def low_count_recode(m: Marginal, theta_sigmas: float = THETA_SIGMAS) -> Recode | None:
    """The recoding of one attribute from its noisy 1-way marginal (None: keep all)."""
    theta = theta_sigmas * m.sigma
    v = m.values
    low = v < theta
    if low.sum() < 2:  # merging one value (or none) changes nothing
        return None
    lut = np.empty(v.size, dtype=np.int64)
    keep = np.nonzero(~low)[0]
    lut[keep] = np.arange(keep.size)
    lut[low] = keep.size
    merged = np.nonzero(low)[0]
    p = np.maximum(v[merged], 0.0)
    p = p / p.sum() if p.sum() > 0 else np.full(merged.size, 1.0 / merged.size)
    return Recode(m.attrs[0], lut, merged, p)


def recoded_one_way(m: Marginal, r: Recode, theta_sigmas: float = THETA_SIGMAS) -> Marginal:
    """The 1-way marginal on the new domain; a merged total below theta becomes 0."""
    vals = np.bincount(r.lut, weights=m.values, minlength=r.size).astype(np.float64)
    if vals[-1] < theta_sigmas * m.sigma:
        vals[-1] = 0.0
    # summing k noisy cells adds k times the variance: the merged cell is less certain
    return Marginal(m.attrs, (r.size,), vals, m.sigma)


def undo(codes: np.ndarray, r: Recode, key, call: int) -> np.ndarray:
    """New codes back to old ones; the merged code draws a member by its noisy share."""
    codes = np.asarray(codes, dtype=np.int64)
    inv = np.empty(r.size - 1, dtype=np.int64)
    keep = np.nonzero(r.lut < r.size - 1)[0]
    inv[r.lut[keep]] = keep
    out = np.empty(codes.size, dtype=np.int64)
    is_m = codes == r.size - 1
    out[~is_m] = inv[codes[~is_m]]
    idx = np.nonzero(is_m)[0]
    if idx.size:
        u = uniform(philox4x32(key, idx.astype(np.uint64), r.attr, rng.UNMERGE, call)[0])
        pick = np.minimum(np.searchsorted(np.cumsum(r.merged_p), u, side="right"),
                          r.merged.size - 1)
        out[idx] = r.merged[pick]
    return out


def one_way_of(m: Marginal, attr: int) -> Marginal:
    """m summed onto one attribute: the noisy 1-way marginal a grouped run measures as
    (attr, group); its cells each sum cells/size noisy counts."""
    size = m.shape[m.attrs.index(attr)]
    return Marginal((attr,), (size,), project_table(m, (attr,)),
                    m.sigma * float(np.sqrt(m.cells // size)))


def recoded(m: Marginal, r: Recode) -> Marginal:
    """m on the new domain of r's attribute (merged values' cells summed); a 1-way
    marginal as recoded_one_way has it."""
    if len(m.attrs) == 1:
        return recoded_one_way(m, r)
    k = m.attrs.index(r.attr)
    table = np.moveaxis(m.table(), k, -1)
    merge = np.zeros((r.lut.size, r.size))
    merge[np.arange(r.lut.size), r.lut] = 1.0
    out = np.moveaxis(table @ merge, -1, k)
    return Marginal(m.attrs, out.shape, out.reshape(-1), m.sigma)
