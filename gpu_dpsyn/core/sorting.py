"""Sorts of the records' integer keys: the same permutation on both backends, fast on a CPU.

CuPy's argsort is always stable (CUB's radix sort).  NumPy's kind="stable" is a radix
sort only for keys of 16 bits or fewer and a timsort otherwise, 4-6 times slower on
2.5 * 10^5 rows (17 ms against 3 ms on one x86_64 core), and these sorts were a third of
a NumPy fit on small tables.  So the NumPy bodies here give the stable order by other
means, never another order:

* argsort_bounded: non-negative integers below a bound, as 16-bit digits from the least
  significant up (LSD radix).  Each pass is a stable sort, so after the pass of digit d
  the order is by digits d.. 0, ties by index: after the last, the stable order.
* argsort_distinct: random sort keys, distinct but for a chance tie, with NumPy's
  default (unstable, vectorized) sort.  A permutation sorting distinct keys is unique,
  hence the stable one; a tie is looked for afterwards and then sorted stably.
* lexsort_distinct: by a key, ties by distinct ranks (the polish's proposals by gain):
  no two (key, rank) pairs are equal, so that order too is unique and any sort gives
  it: the keys by the default sort, then each run of equal keys by rank, as one sort
  of distinct integers (a third of the two stable sorts' time on 3 * 10^4 floats).
* unique_ids: numpy.unique(return_index, return_inverse, return_counts) of ids below a
  bound, by counting where the bound is at most the length, else from the runs of the
  default sort (any order of ties gives the same runs; each run's least index is
  its first): a quarter of numpy.unique's time, whose index needs a stable sort.
* first_k: the mask rank < k of the stable order (gum.apportion's largest remainders),
  by selection: the GPU's plan kernel selects the same cells by a radix select.
"""
from __future__ import annotations

import numpy as np

DIGIT = 16
DENSE_PER_ROW = 1  # unique_ids counts in a table of up to this many cells a row (its
# memory, 17 bytes a cell, stays within what numpy.unique takes)


def argsort_stable(xp, a):
    """The stable argsort (cupy.argsort is always stable and takes no kind=)."""
    return xp.argsort(a, kind="stable") if xp is np else xp.argsort(a)


def read_bound(a) -> int | None:
    """max + 1 of a non-empty NumPy array of non-negative integers, else None."""
    return int(a.max()) + 1 if len(a) and int(a.min()) >= 0 else None


def argsort_bounded(xp, a, bound: int | None = None):
    """argsort_stable of integers in [0, bound) (bound None: NumPy reads max + 1)."""
    if xp is not np or a.dtype.itemsize <= 2:  # CuPy's, and NumPy's of 16 bits: radix
        return argsort_stable(xp, a)
    bound = read_bound(a) if bound is None else bound
    if bound is None:
        return argsort_stable(np, a)
    digits = max(1, (max(int(bound) - 1, 0).bit_length() + DIGIT - 1) // DIGIT)
    if digits > 64 // DIGIT:
        return argsort_stable(np, a)
    order = np.argsort((a & 0xFFFF).astype(np.uint16), kind="stable")
    for d in range(1, digits):
        order = order[np.argsort(((a[order] >> (DIGIT * d)) & 0xFFFF).astype(np.uint16),
                                 kind="stable")]
    return order


def argsort_distinct(xp, keys):
    """argsort_stable of random keys that are almost surely distinct (NaNs, never equal,
    would pass the tie check: floats with one take the stable sort)."""
    if xp is not np:
        return xp.argsort(keys)
    if keys.dtype.kind == "f" and bool(np.isnan(keys).any()):
        return argsort_stable(np, keys)
    order = np.argsort(keys)
    k = keys[order]
    if bool((k[1:] == k[:-1]).any()):  # a tie: its order must be by index
        return argsort_stable(np, keys)
    return order


def runs(k):
    """For sorted NumPy keys k: (each element's run of equal keys, numbered from 0; each
    run's first index).  starts[run] is each element's run start."""
    new = np.empty(len(k), dtype=bool)
    new[:1] = True
    np.not_equal(k[1:], k[:-1], out=new[1:])
    return np.cumsum(new) - 1, np.flatnonzero(new)


def lexsort_distinct(xp, keys, ranks, bound: int):
    """numpy.lexsort((ranks, keys)): the order by keys, ties by ranks, distinct integers
    in [0, bound).  CuPy: two stable sorts.  NumPy: the keys' default sort numbers the
    runs of equal keys (0, 1, ...), then run * bound + rank orders within each run."""
    if xp is not np or len(keys) * max(int(bound), 1) >= 1 << 62 or (
            keys.dtype.kind == "f" and bool(np.isnan(keys).any())):
        order = argsort_stable(xp, ranks)
        return order[argsort_stable(xp, keys[order])]
    order = np.argsort(keys)
    run, _ = runs(keys[order])
    return order[np.argsort(run * int(bound) + ranks[order])]


def unique_ids(xp, ids, bound: int | None = None):
    """(first, inv, counts) of numpy.unique(ids, return_index=True, return_inverse=True,
    return_counts=True)[1:] for integer ids in [0, bound) (None: NumPy reads max + 1):
    each distinct id's first index, each element's rank among the distinct ids, how
    often each occurs."""
    n = len(ids)
    if xp is np and bound is None:
        bound = read_bound(ids)
    if xp is not np or n == 0:
        _, first, inv, counts = xp.unique(ids, return_index=True, return_inverse=True,
                                          return_counts=True)
        return first, inv.reshape(-1), counts
    if bound is None or bound > DENSE_PER_ROW * n:  # by the default sort: the runs of
        order = np.argsort(ids)  # equal ids, whatever order ties take, and each run's
        run, starts = runs(ids[order])  # least index
        inv = np.empty(n, dtype=np.int64)
        inv[order] = run
        return np.minimum.reduceat(order, starts), inv, np.diff(np.append(starts, n))
    present = np.bincount(ids, minlength=bound)
    seen = present > 0
    inv = (np.cumsum(seen) - 1)[ids]
    first = np.full(int(seen.sum()), n, dtype=np.int64)
    np.minimum.at(first, inv, np.arange(n, dtype=np.int64))
    return first, inv, present[seen]


def first_k(keys, k):
    """Mask of a NumPy array's first k in the stable ascending order (rank < k): the keys
    below the k-th smallest, then those equal to it by index, by np.partition (linear)
    instead of a sort.  NaNs rank last, as np.sort puts them."""
    n = keys.size
    m = 0 if not k > 0 else n if k >= n else -int(-k // 1)  # rank < k: ceil(k) keys
    if m == 0:
        return np.zeros(n, dtype=bool)
    kth = np.partition(keys, m - 1)[m - 1]
    if np.isnan(kth):  # fewer than m numbers: all of them, then NaNs by index
        nan = np.isnan(keys)
        out = ~nan
        out[np.flatnonzero(nan)[:m - np.count_nonzero(out)]] = True
        return out
    out = keys < kth  # NaN compares false: never below nor equal to a number
    out[np.flatnonzero(keys == kth)[:m - np.count_nonzero(out)]] = True
    return out
