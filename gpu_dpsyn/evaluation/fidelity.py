"""How close a synthetic table is to the real one, for `evaluate` and its report.

Every k-way marginal's TVD comes with two yardsticks computed from the real table: the TVD of a
table that keeps each column's distribution but draws the columns independently (what keeping
no relationship at all scores), and the sampling level (about the TVD that two random samples
of these sizes from the real table's own distribution show by chance).  Pairs also get
Cramér's V in both tables.  Reads the real table: not for publication.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DataError, DPSynError
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.evaluation.evaluate import check_rows, joint_counts, pick_sets, range_query_score
from gpu_dpsyn.core.grouping import group_code, group_size
from gpu_dpsyn.core.progress import bar

DENSITY_SETS = 300  # NIST 2018: the density score averages 300 random 3-way marginals
_SET_NAMES = {1: "columns", 2: "column pairs", 3: "column triples"}


@dataclass
class KWay:
    """The k-way marginals evaluated: sets of column indexes and, per set, its TVD and the
    two yardsticks (independent is None for k = 1); pairs also carry Cramér's V."""
    k: int
    sets: list
    total: int  # how many k-sets the table has (sets may be a random subset)
    tvd: np.ndarray
    independent: np.ndarray | None
    sampling: np.ndarray
    v_real: np.ndarray | None = None
    v_syn: np.ndarray | None = None

    @property
    def mean(self) -> float:
        return float(self.tvd.mean())

    @property
    def sampled(self) -> bool:
        return len(self.sets) < self.total

    @property
    def noun(self) -> str:
        return _SET_NAMES.get(self.k, f"{self.k}-column sets")

    def describe(self) -> str:
        """'all 91 column pairs' or '300 random of 364 column triples'."""
        what = self.noun
        if self.sampled:
            return f"{len(self.sets):,} random of {self.total:,} {what}"
        return f"all {self.total:,} {what}" if self.total > 1 else f"the only one of the {what}"

    def worst(self, n: int, beyond_chance: bool = False) -> list:
        """[(set, tvd)] of the n largest TVDs, worst first; beyond_chance: of the largest
        TVDs above the sampling level (a pair of 144,000 cells differs by half its TVD
        between two samples of one population, a pair of 9 hardly at all)."""
        score = self.tvd - self.sampling if beyond_chance else self.tvd
        order = np.argsort(-score, kind="stable")[:n]
        return [(self.sets[i], float(self.tvd[i])) for i in order]


@dataclass
class Evaluation:
    """Coded tables, their domain and the KWay results for k = 1, 2, 3 (as many as there are
    columns)."""
    real: list
    syn: list
    domain: tuple
    names: list
    ways: dict = field(default_factory=dict)

    def density_score(self) -> float:
        """NIST 2018 density score, 1e6 * (1 - mean TVD) over 300 random 3-way marginals
        (the same draw as evaluate.density_score), reusing the TVDs already computed."""
        if len(self.domain) < 3:
            return float("nan")
        known = dict(zip(self.ways[3].sets, self.ways[3].tvd)) if 3 in self.ways else {}
        nr, ns = len(self.real[0]), len(self.syn[0])
        vals = []
        for s in pick_sets(len(self.domain), 3, DENSITY_SETS):
            if s not in known:
                cr, cs, _ = joint_counts(self.real, self.syn, s, self.domain)
                known[s] = 0.5 * np.abs(cr / nr - cs / ns).sum()
            vals.append(known[s])
        return float(1e6 * (1.0 - np.mean(vals)))

    def range_query_score(self) -> float:
        return range_query_score(self.real, self.syn, self.domain)


def _encoded(df, schema, name: str) -> list:
    """encode(df, schema), its refusal naming the table (real or synthetic)."""
    try:
        return encode(df, schema)
    except DPSynError as e:
        how = ("; fit() repairs such values by its rule (on_invalid): score the table as it "
               "read it with gpu_dpsyn.data.repair.repair(real, schema)"
               if name == "real" and isinstance(e, DataError) else "")
        raise type(e)(f"the {name} table: {e}{how}") from None


DEFAULT_TRIPLES = 2000  # triples scored without max_sets: on a 63-column table, all 39,711
# made evaluate take 34 s, a random 2,000 6.2 s, their mean TVD 0.0378 against 0.0393


def evaluate_tables(real, syn, schema, ways=(1, 2, 3), max_sets: int | None = None,
                    seed: int = 0, progress: bool = False) -> Evaluation:
    """TVD of every (or max_sets random, per k > 1) k-way marginal, with its yardsticks;
    without max_sets, every pair and at most DEFAULT_TRIPLES random triples.  Every single
    column is evaluated: they are cheap, and the report draws them all.  schema: a Schema,
    a dict or the path of a JSON file."""
    schema = load_schema(schema)
    check_rows(real, syn)
    r, s = (_encoded(df, schema, name) for name, df in (("real", real), ("synthetic", syn)))
    ev = Evaluation(r, s, schema.domain, [c.name for c in schema.synth_columns])
    one_way = [np.bincount(c, minlength=d) / len(c) for c, d in zip(r, ev.domain)]
    for k in ways:
        if k > len(ev.domain):
            continue
        cap = max_sets if k > 1 and max_sets is not None else DEFAULT_TRIPLES if k == 3 \
            else None
        sets = pick_sets(len(ev.domain), k, cap, seed)
        stats = []
        with bar(progress, len(sets), f"{k}-way marginals") as b:
            for attrs in sets:
                stats.append(_set_stats(r, s, attrs, ev.domain, one_way))
                if b is not None:
                    b.update(1)
        cols = [np.array(c, dtype=np.float64) for c in zip(*stats)]
        ev.ways[k] = KWay(k, sets, math.comb(len(ev.domain), k), cols[0],
                          cols[1] if k > 1 else None, cols[2],
                          *((cols[3], cols[4]) if k == 2 else ()))
    return ev


def _set_stats(real, syn, attrs, domain, one_way) -> tuple:
    """(TVD, TVD of independent columns, sampling level[, Cramér's V real, synthetic])."""
    cr, cs, cells = joint_counts(real, syn, attrs, domain)
    nr, ns = len(real[0]), len(syn[0])
    p, q = cr / nr, cs / ns
    tvd = 0.5 * np.abs(p - q).sum()
    # E|p_r - p_s| for two samples of one distribution: the normal approximation, capped at
    # 2p (both shares are 0 or small where a cell is rare)
    sampling = 0.5 * np.minimum(np.sqrt(2 / np.pi * p * (1 - p) * (1 / nr + 1 / ns)), 2 * p).sum()
    dims = [domain[a] for a in attrs]
    if len(attrs) == 1:
        return tvd, 0.0, sampling
    codes = (np.unravel_index(np.arange(len(p)), dims) if cells is None
             else np.unravel_index(cells, dims))
    indep = np.prod([one_way[a][c] for a, c in zip(attrs, codes)], axis=0)
    # cells that occur in neither table still carry independent mass: 1 - what is listed
    gap = 0.5 * (np.abs(p - indep).sum() + max(0.0, 1.0 - indep.sum()))
    if len(attrs) > 2:
        return tvd, gap, sampling
    return tvd, gap, sampling, _cramers_v(cr, codes), _cramers_v(cs, codes)


def _cramers_v(counts, codes) -> float:
    """Cramér's V of a two-way table given as counts per cell (codes: the cells' row and
    column codes): sqrt(phi^2 / (min(rows, columns) - 1)) over the rows and columns that
    occur; 0 when one side has a single value."""
    n = counts.sum()
    if n == 0:
        return 0.0
    a, b = codes
    ra, rb = np.bincount(a, weights=counts), np.bincount(b, weights=counts)
    m = min(np.count_nonzero(ra), np.count_nonzero(rb)) - 1
    if m < 1:
        return 0.0
    occ = counts > 0
    # phi^2 = sum p_ij^2 / (p_i p_j) - 1: over occupied cells only, so sparse tables work
    phi2 = (counts[occ] ** 2 / (ra[a[occ]] * rb[b[occ]])).sum() - 1.0
    return float(math.sqrt(max(0.0, phi2) / m))


def group_tvd(real: list, syn: list, domain, group, max_pairs: int | None = 50,
              seed: int = 0) -> list:
    """Per group of the columns `group` (indexes) that occurs in the real table, largest
    first: {"group": codes, "real_rows", "synthetic_rows", "tvd_2way"}, the mean TVD of the
    pairs of other columns (max_pairs random ones) within the group; a group missing from
    the synthetic table scores 1."""
    group = list(group)
    gsize = group_size(group, domain)
    gr, gs = ([group_code(np, t, group, domain).astype(np.int64)] for t in (real, syn))
    nr, ns = np.bincount(gr[0], minlength=gsize), np.bincount(gs[0], minlength=gsize)
    rest = [a for a in range(len(domain)) if a not in group]
    pairs = [tuple(rest[i] for i in p) for p in pick_sets(len(rest), 2, max_pairs, seed)]
    tvd = np.zeros(gsize)
    for a, b in pairs:
        cells = int(domain[a]) * int(domain[b])
        counts = []
        for t, g in ((real, gr[0]), (syn, gs[0])):
            c = (g * cells + t[a].astype(np.int64) * int(domain[b]) + t[b].astype(np.int64))
            counts.append(np.bincount(c, minlength=gsize * cells).reshape(gsize, cells))
        p = counts[0] / np.maximum(nr, 1)[:, None]
        q = counts[1] / np.maximum(ns, 1)[:, None]
        tvd += np.where(ns > 0, 0.5 * np.abs(p - q).sum(axis=1), 1.0)
    tvd /= max(len(pairs), 1)
    present = np.nonzero(nr)[0]
    present = present[np.argsort(-nr[present], kind="stable")]
    return [{"group": tuple(int(x) for x in np.unravel_index(g, [domain[a] for a in group])),
             "real_rows": int(nr[g]), "synthetic_rows": int(ns[g]), "tvd_2way": float(tvd[g])}
            for g in present]
