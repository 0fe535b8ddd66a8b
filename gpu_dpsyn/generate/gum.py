"""GUM: Gradually Update a synthetic dataset based on Marginals (DPSyn, App. A).

Cell-level planning is written against the backend's array module so the CPU
and GPU backends compute the very same add/remove counts; the record update
itself is the backend's `gum_apply`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from gpu_dpsyn.backends.numpy import host_kernels
from gpu_dpsyn.core import rng, threads
from gpu_dpsyn.core.checks import flag, integer, positive
from gpu_dpsyn.errors import ParameterError


MAX_ITERATIONS = 10_000  # a bound on GUM's work: 10**8 iterations would run for days


@dataclass
class GUMConfig:
    """iterations="auto" runs until the mean TVD to the targets has not improved by
    min_gain (relative) for `patience` iterations, at most max_iterations: on flights
    at eps 1 and 8 the fixed 50 iterations stopped at 0.036 / 0.023 while the fit
    still improved, and 100 iterations with alpha = 0.7^(t // 10) (instead of
    0.84^(t // 20)) lowered 3-way TVD 0.132 -> 0.123 and 0.140 -> 0.134."""
    iterations: int | str = "auto"
    alpha: float = 1.0  # initial update rate
    alpha_decay: float = 0.7  # step decay: alpha * decay ** (it // alpha_step)
    alpha_step: int = 10
    mix: str = "S5"  # S5: even iterations half Duplicate, odd all Duplicate
    max_iterations: int = 200
    patience: int = 10
    min_gain: float = 0.005
    # the j-th iteration whose mix has Replaces (beyond those into empty cells, which
    # every mix makes) leads each marginal with its column j mod k; internal, not exposed
    rotate: bool = True

    def __post_init__(self):
        if self.iterations != "auto":
            self.iterations = integer("iterations", self.iterations, 0)
        self.max_iterations = integer("max_iterations", self.max_iterations, 1)
        for name in ("iterations", "max_iterations"):
            v = getattr(self, name)
            if v != "auto" and v > MAX_ITERATIONS:
                raise ParameterError(f"{name} must be at most {MAX_ITERATIONS:,} (GUM stops "
                                     "improving long before; \"auto\" stops when it does), "
                                     f"got {v:,}")
        self.patience = integer("patience", self.patience, 1)
        self.min_gain = positive("min_gain", self.min_gain)
        self.alpha = positive("alpha", self.alpha)
        self.alpha_decay = positive("alpha_decay", self.alpha_decay)
        self.alpha_step = integer("alpha_step", self.alpha_step, 1)
        self.rotate = flag("rotate", self.rotate)
        if self.mix not in MIXES:
            raise ParameterError(f"unknown update mix {self.mix!r}; choose one of {sorted(MIXES)}")

    def alpha_at(self, it: int) -> float:
        return self.alpha * self.alpha_decay ** (it // self.alpha_step)

    @property
    def limit(self) -> int:
        return self.max_iterations if self.iterations == "auto" else self.iterations

    def converged(self, history) -> bool:
        """(auto) No relative gain of min_gain over the best of `patience` iterations ago."""
        if self.iterations != "auto" or len(history) <= self.patience:
            return False
        return min(history[-self.patience:]) > min(history[:-self.patience]) * (1 - self.min_gain)


MIXES = {
    "S5": lambda it: 0.5 if it % 2 == 0 else 1.0,
    "duplicate": lambda it: 1.0,
    "replace": lambda it: 0.0,
    "half": lambda it: 0.5,
}


@dataclass
class GUMResult:
    cols: list
    history: list = field(default_factory=list)  # mean TVD to the targets per iteration
    seconds: list = field(default_factory=list)  # wall time when each history entry was taken


@dataclass
class Structure:
    """How the targets are used: which go through GUM and over which attributes, which
    attributes are appended afterwards, and which columns a Duplicate copies."""
    gum_targets: list  # indices into targets
    appended: list  # (attr, target index), in sampling order
    groups: list  # per target: the columns a Duplicate for it copies
    attrs: list  # per target: its attributes in GUM (all but an appended one)


DUPLICATE_SCOPES = ("neighbours", "component", "all")


def neighbours(target_attrs, n_cols: int) -> list:
    """For each column, the sorted other columns it shares a target with (its
    neighbours in the marginal graph)."""
    near = [set() for _ in range(n_cols)]
    for attrs in target_attrs:
        for a in attrs:
            near[a].update(b for b in attrs if b != a)
    return [sorted(x) for x in near]


def plan_structure(target_attrs: list, n_attrs: int, append: bool = True,
                   scope: str = "neighbours") -> Structure:
    """Attribute appending: an attribute found in exactly one multi-way target, whose
    other attributes stay in GUM, is sampled after GUM from that target given them.  The
    target's projection onto those others stays in GUM when it holds two or more: a
    3-way (x, y, z) appending x still fits (y, z), or y and z would keep independent
    draws.  Separate and join: a Duplicate copies only its own component's columns, so
    independent components never disturb each other.  scope="neighbours" narrows that
    to the marginal's attributes and their neighbours in the marginal graph: copying
    far columns along drifts their joint with the marginal's (repeated resampling of
    the same donors) while no target holds it in place.  scope="all" copies whole records
    (every attribute left in GUM)."""
    if scope not in DUPLICATE_SCOPES:
        raise ValueError(f"duplicate scope must be one of {DUPLICATE_SCOPES}, got {scope!r}")
    count = np.zeros(n_attrs, dtype=int)
    for attrs in target_attrs:
        if len(attrs) > 1:
            count[list(attrs)] += 1
    appended, out_attrs = [], set()
    attrs_in_gum = [tuple(a) for a in target_attrs]
    if append:
        for i, attrs in enumerate(target_attrs):
            if len(attrs) < 2:
                continue
            for x in attrs:
                rest = tuple(a for a in attrs if a != x)
                if count[x] == 1 and not any(a in out_attrs for a in rest):
                    appended.append((x, i))
                    out_attrs.add(x)
                    attrs_in_gum[i] = rest
                    break
    used = {i for _, i in appended}
    gum_targets = [i for i, a in enumerate(attrs_in_gum) if i not in used or len(a) > 1]
    parent = list(range(n_attrs))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a
    for i in gum_targets:
        attrs = attrs_in_gum[i]
        for a in attrs[1:]:
            parent[find(a)] = find(attrs[0])
    comp = {}
    for a in range(n_attrs):
        if a not in out_attrs:
            comp.setdefault(find(a), []).append(a)
    groups = [comp.get(find(attrs[0]), []) for attrs in attrs_in_gum]
    if scope == "all":
        groups = [sorted(set(range(n_attrs)) - out_attrs)] * len(attrs_in_gum)
    elif scope == "neighbours":
        near = neighbours([attrs_in_gum[i] for i in gum_targets], n_attrs)
        groups = [sorted(set(attrs).union(*(near[a] for a in attrs)) - out_attrs)
                  for attrs in attrs_in_gum]
    return Structure(gum_targets, appended, groups, attrs_in_gum)


def project(attrs, shape, t, keep) -> tuple:
    """The target (attrs, shape, t) summed onto the attributes `keep` (in attrs' order);
    on the host, so both backends fit the very same numbers."""
    axes = tuple(k for k, a in enumerate(attrs) if a not in keep)
    table = np.asarray(t, dtype=np.float64).reshape(shape).sum(axis=axes)
    return tuple(keep), table.shape, table.reshape(-1)


def run_gum(backend, targets, cols, key, call: int, cfg: GUMConfig, progress=None,
            groups=None, slack=None, step0: int = 0) -> GUMResult:
    """Fit the records `cols` (edited in place) to targets: (attrs, shape, t) with t the
    target counts (numpy, summing to n).  groups[i]: columns a Duplicate for target i
    copies (default: all).  slack[i] (counts): a cell of target i whose count is within it
    of its target is left as it is (hold_close), so records started from a prior keep
    what the noisy marginals do not contradict.  step0: where the updates' RNG counters
    start (a later run on the same records and call draws fresh streams)."""
    xp = backend.xp
    # (target, r) -> the target led by its column r, on the device: each rotation is copied
    # there once a run, not again at every change of lead (a target has at most 3 columns)
    resident = {}

    def rotated(i, r):
        if (i, r) not in resident:
            attrs, shape, t = rotate_target(*targets[i], r)
            resident[(i, r)] = (attrs, shape, xp.asarray(t, dtype=xp.float64))
        return resident[(i, r)]
    slack = [0.0] * len(targets) if slack is None else [float(x) for x in slack]
    hist, seconds, t0 = [], [], time.perf_counter()

    for it in range(cfg.limit):
        err = target_errors(backend, cols, targets)  # a device-to-host copy: the clock reads finished work
        hist.append(float(err.mean()) if err.size else 0.0)
        seconds.append(time.perf_counter() - t0)
        if cfg.converged(hist) or hist[-1] == 0.0:  # host numbers: alike on every backend;
            break  # at 0 every target is met exactly, and an update would move nothing
        alpha, dup = cfg.alpha_at(it), MIXES[cfg.mix](it)
        lead = sum(MIXES[cfg.mix](j) < 1.0 for j in range(it))  # such iterations so far
        for pos, i in enumerate(np.argsort(-err, kind="stable")):
            r = lead % len(targets[i][0]) if cfg.rotate else 0
            attrs, shape, ti = rotated(i, r)
            cell, s = backend.cell_histogram(cols, attrs, shape)
            t = hold_close(xp, s, ti, slack[i]) if slack[i] > 0 else ti
            add, rem = backend.plan_update(s, t, alpha)
            backend.gum_apply(cols, attrs, shape, cell, s, add, rem, dup, key,
                              (step0 + it) * len(targets) + pos, call,
                              None if groups is None else groups[i])
        if progress is not None:
            progress.update(1)
    else:
        err = target_errors(backend, cols, targets)
        hist.append(float(err.mean()) if err.size else 0.0)
        seconds.append(time.perf_counter() - t0)
    return GUMResult(cols, hist, seconds)


def target_errors(backend, cols, targets) -> np.ndarray:
    """Each target's TVD to the records' histogram (targets: (attrs, shape, counts
    summing to the records)).  All histograms in one pass (a GPU: one launch) and one
    copy, summed on the host: device reductions round in another order, and GUM's update
    order must not depend on the backend."""
    if not targets:
        return np.zeros(0)
    h = backend.to_numpy(backend.histograms(cols, [(a, sh) for a, sh, _ in targets]))
    ends = np.cumsum([t.size for _, _, t in targets])
    return np.array([np.abs(part - t).sum() for part, (_, _, t) in
                     zip(np.split(h, ends[:-1]), targets)]) / (2.0 * len(cols[0]))


def rotate_target(attrs, shape, t, r: int) -> tuple:
    """The target (attrs, shape, t) with its columns rotated left by r: cells then run in
    the order of column r first, and a Replace (which pairs slots in cell order) keeps
    that column wherever its counts agree.  On the host, for both backends alike."""
    perm = [(k + r) % len(attrs) for k in range(len(attrs))]
    table = np.asarray(t, dtype=np.float64).reshape(shape).transpose(perm)
    return tuple(attrs[k] for k in perm), table.shape, table.reshape(-1)


def hold_close(xp, s, t, slack: float):
    """The target with every cell that is within `slack` of its current count s replaced
    by s: those cells get no update.  Elementwise and exact in float64 (counts are
    integers), so both backends plan the same update."""
    s = s.astype(xp.float64)
    return xp.where(xp.abs(t - s) <= slack, s, t)


def append_attribute(backend, cols, x: int, attrs, shape, t, key, call: int) -> None:
    """Sample column x from target t (over attrs) given the record's other attributes;
    anchor cells with no mass fall back to x's own margin."""
    xp = backend.xp
    k = attrs.index(x)
    table = np.moveaxis(np.asarray(t, dtype=np.float64).reshape(shape), k, -1)
    size = table.shape[-1]
    table = table.reshape(-1, size)
    margin = table.sum(axis=0)
    margin = margin / margin.sum() if margin.sum() > 0 else np.full(size, 1.0 / size)
    rows = table.sum(axis=1, keepdims=True)
    cond = np.where(rows > 0, table / np.where(rows > 0, rows, 1.0), margin)
    anchors = tuple(a for a in attrs if a != x)
    ashape = tuple(d for a, d in zip(attrs, shape) if a != x)
    row = backend.cell_index(cols, anchors, ashape).astype(xp.int64)
    u = backend.uniforms(key, len(row), x, rng.APPEND, call)
    cols[x][...] = draw_rows(backend, cond, row, u).astype(cols[x].dtype)


def draw_rows(backend, cond, row, u):
    """For each record, the value drawn with u in (0, 1) from its row of cond (float64,
    R x size, rows summing to 1, on the host or the backend): one sorted lookup in the
    rows' CDFs laid end to end (row r's run from r to r + 1; backend.cdf_rows), the same
    on every backend.  Where r + u rounds onto the next row's start (r past ~2^20), the
    draw is clipped to the row's last value of positive probability, so a value of
    probability 0 is never drawn."""
    xp = backend.xp
    size = cond.shape[1]
    flat, last = backend.cdf_rows(cond)
    lib = host_kernels.library() if xp is np else None
    if lib is not None and size and len(flat) and np.shape(u) == np.shape(row):
        # host_records.cpp: the same probes, clipped (other shapes: NumPy broadcasts)
        row = np.ascontiguousarray(row, dtype=np.int64)
        u = np.ascontiguousarray(u, dtype=np.float64)
        out = np.empty(len(row), dtype=np.int64)
        threads.each(lambda lo, hi: host_kernels.draw_rows(lib, flat, size, row, u, last, out,
                                                           lo, hi),
                     len(row), max(1, size.bit_length()))
        return out
    q = row.astype(xp.float64) + u
    if xp is np:  # searched within each record's own row: see row_search
        at = np.empty(len(row), dtype=np.int64)

        def records(lo, hi):
            at[lo:hi] = row_search(flat, row[lo:hi], q[lo:hi], size)
        threads.each(records, len(row), max(1, size.bit_length()))
    else:
        at = xp.searchsorted(flat, q, side="right") - row * size
    return xp.minimum(xp.clip(at, 0, size - 1), last[row])


def row_search(flat, row, q, size: int):
    """searchsorted(flat, q, side="right") - row * size, clipped to [0, size], for NumPy:
    a binary search within each query's own run of `size` entries (its row of the CDFs
    laid end to end) instead of across all of them: log2(size) gathers near each other,
    not log2(rows * size) far apart (a quarter of a second per column at 3 * 10^5
    records).  The same counts: every entry of an earlier row is at most r <= q, every
    entry of a later one at least r + 1, which only a q rounded onto r + 1 reaches, and
    then both give size or more, clipped to size."""
    first = row * size  # the first entry of the run holding the answer
    length = np.full(len(row), size, dtype=np.int64)
    while length.any():  # upper bound: first entry > q
        half = length // 2
        mid = first + half
        go = (flat[np.minimum(mid, len(flat) - 1)] <= q) & (length > 0)
        first = np.where(go, mid + 1, first)
        length = np.where(go, length - half - 1, half)
    return first - row * size
