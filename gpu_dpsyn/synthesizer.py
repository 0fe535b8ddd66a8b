"""The public API: Synthesizer(epsilon, delta).fit(df, schema).sample(n)."""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import os
import time
import warnings

import numpy as np
import pandas as pd

from gpu_dpsyn.estimate import targets
from gpu_dpsyn.measure import errors as triple_errors
from gpu_dpsyn.selection import triples as adaptive
from gpu_dpsyn.measure import quantiles
from gpu_dpsyn.core import rng
from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.core.checks import column_labels, flag, integer
from gpu_dpsyn.estimate.consistency import make_consistent, total_standard_error
from gpu_dpsyn.estimate.empirical_bayes import denoise_marginals
from gpu_dpsyn.data.dtypes import MAX_ROWS
from gpu_dpsyn.data.encoding import check_columns, encode
from gpu_dpsyn.generate.decode import decode
from gpu_dpsyn.core.types import code_dtype
from gpu_dpsyn.errors import (DataError, DPSynError, LargeDomainWarning, ParameterError,
    PrivacyParameterError, RowCountWarning, SchemaError)
from gpu_dpsyn.estimate.filtering import low_count_recode, one_way_of, recoded, undo
from gpu_dpsyn.generate.gibbs import REPAIR, gibbs_sweep
from gpu_dpsyn.core.grouping import (PARALLEL_NOTE, candidate_pairs, group_code, group_size,
    parse_group_by, resolve_levels, split_group)
from gpu_dpsyn.core.types import Level
from gpu_dpsyn.generate.gum import (DUPLICATE_SCOPES, GUMConfig, append_attribute,
    plan_structure, project, run_gum, target_errors)
from gpu_dpsyn.backends.arrays import apportion
from gpu_dpsyn.core.types import DEFAULT_MAX_CELLS, check_domains
from gpu_dpsyn.measure.marginals import LocalCounts, measure
from gpu_dpsyn.selection.greedy import dpsyn_plan
from gpu_dpsyn.generate.polish import polish
from gpu_dpsyn.privacy import Accountant
from gpu_dpsyn.privacy.bounding import kept_rows
from gpu_dpsyn.privacy.keys import noise_key
from gpu_dpsyn.privacy.samplers import MAX_NOISE_CELLS
from gpu_dpsyn.estimate.targets import private_row_estimate
from gpu_dpsyn.measure.indif import public_scores
from gpu_dpsyn.core.progress import bar
from gpu_dpsyn.data.schema import Schema, load_schema
from gpu_dpsyn.selection.greedy import (COMBINE_MAX_CELLS, c23_fractions, combine_cliques,
    connect_isolated, greedy_select)
from gpu_dpsyn.measure.indif import measure_indif
from gpu_dpsyn.generate.shuffle import neighbour_shuffle
from gpu_dpsyn.core.summing import left_sum

METHODS = ("privsyn", "dpsyn")
SELECTIONS = ("auto", "public", "private")
MECHANISMS = ("auto", "gaussian", "laplace")
PRIVSYN_SPLIT = (0.1, 0.1, 0.8)  # InDif selection, 1-way marginals, selected marginals
WORK_BYTES_PER_ROW = 80  # sort keys, order, removed slots and cell index of a GUM update;
# the Gibbs sweep's contexts, orders and ranks (gibbs.systematic_positions)
GROUP_BYTES_PER_ROW = 16  # a grouped level's group code column and its int64 build
# beyond this the noise is below a thousandth of a count; near 1e21 the zCDP conversion
# overflows
MAX_EPSILON = 1e6
# warn when the row count estimate's standard error passes this share of it
COUNT_RELATIVE_SE = 0.1


class Synthesizer:
    """Differentially private synthetic data by noisy marginals + consistency + GUM.

    fit() is the only step that reads the private data, and it spends the whole
    (epsilon, delta) budget; sample() is post-processing and may be called freely.

    method="privsyn" (default) selects marginals privately by InDif and measures
    1-way + selected (<= 3-way) marginals; method="dpsyn" measures every 1-way and
    2-way marginal with equal shares.  workload={("a", "b"): w, ...} makes column
    sets count w times more: always measured, with w times the weight in the split.
    denoise=True (default) takes each multi-way marginal's noisy cells to their posterior
    means under a prior on its counts estimated from them (empirical_bayes.py) before
    consistency: post-processing, which shrinks the noise of empty cells to about 0.
    polish=True (default) ends GUM (and the Gibbs sweep) with integer moves of each
    column's values that bring the records' marginals closer to their targets, never
    further (polish.py).
    Numeric columns with `"bins": {"private_quantiles": K}` get DP quantile edges first,
    bought with quantile_share of the budget (default 5%, split equally among them; the
    method's split scales to the rest): see quantiles.py.

    fit(df, schema, public=pub) starts GUM from a public table of the same schema and, with
    selection="auto" (or "public"), chooses the marginals from it at no cost (prior.py);
    selection="private" keeps the noisy private InDif.  prior_tolerance=k: GUM leaves a cell
    whose count is within k noise standard deviations of its target as it is (default 0:
    on bench/prior.py it helped a close public table by a little and hurt a distant one
    much).  append_attributes="auto" appends only when GUM starts from independent draws,
    not from a prior.  group_by=["state"] or
    levels [["state"], ["puma", "year"]]: every group gets its own noisy count and
    marginals, each level's records the prior of the next (grouping.py).

    client=dask.distributed.Client(...) scales out: fit() then reads a dask DataFrame or
    a path (file, directory or glob) on the workers, and sample_to(path, n) writes
    Parquet parts, one batch per task (gpu_dpsyn.distributed).
    """

    def __init__(self, epsilon: float, delta: float, *, method: str = "privsyn",
                 iterations: int | str = "auto", seed: int | None = None, backend: str = "auto",
                 sensitivity: int | None = None, mechanism: str = "auto",
                 conversion: str = "cks",
                 workload=None, max_cells: int = DEFAULT_MAX_CELLS,
                 consistency_rounds: int = 500, alpha: float = 1.0, alpha_decay: float = 0.7,
                 alpha_step: int = 10, update_mix: str = "S5", filter_low_counts: bool = True,
                 append_attributes: bool | str = "auto", duplicate_scope: str = "neighbours",
                 numeric_decode: str = "uniform", quantile_share: float = quantiles.DEFAULT_SHARE,
                 selection: str = "auto", group_by=None, prior_tolerance: float = 0.0,
                 adaptive_rounds: int = adaptive.ROUNDS, neighbour_shuffle: bool = True,
                 gibbs_sweep: bool = True, polish: bool = True, denoise: bool = True,
                 progress: bool = True,
                 client=None):
        if method not in METHODS:
            raise DPSynError(f"unknown method {method!r}; choose one of {METHODS}")
        if numeric_decode not in ("uniform", "midpoint"):
            raise DPSynError("numeric_decode must be 'uniform' or 'midpoint'")
        if mechanism not in MECHANISMS:
            raise PrivacyParameterError(f"unknown mechanism {mechanism!r}; choose one of "
                                        f"{MECHANISMS}")
        if method == "privsyn" and mechanism == "laplace":
            raise DPSynError("method='privsyn' uses zCDP (Gaussian) accounting; "
                             "use method='dpsyn' for the Laplace mechanism")
        self.epsilon, self.delta = _budget_number(epsilon), _budget_number(delta)
        epsilon = self.epsilon
        if isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) \
                and epsilon > MAX_EPSILON:
            shown = f"{epsilon:.3g}" if epsilon < 1e308 else "more than 1e308"
            raise PrivacyParameterError(f"epsilon must be at most {MAX_EPSILON:g}, got {shown} "
                                        "(that far above it the noise is nil anyway)")
        self.method = method
        if sensitivity is not None:  # 0 must not quietly become the default
            integer("sensitivity (max records per individual)", sensitivity, 1,
                    PrivacyParameterError)
        self.sensitivity = sensitivity
        self.conversion = conversion
        Accountant(epsilon, self.delta, sensitivity or 1, conversion)  # validate now, not after I/O
        self.mechanism = mechanism
        self.workload = _check_workload_shape(workload)
        self.gum = GUMConfig(iterations, alpha, alpha_decay, alpha_step, update_mix)
        self.seed = rng.make_seed(seed)  # post-processing (GUM, decoding) randomness
        self.seeded = seed is not None
        self.backend = get_backend(backend)
        self.backend_name = backend  # what Dask workers resolve for themselves
        self.client = client
        self.max_cells = integer("max_cells", max_cells, 1)
        if self.max_cells > MAX_NOISE_CELLS:  # one draw's elements share a stream
            raise ParameterError(f"max_cells must be at most 2^30, got {max_cells!r}")
        self.consistency_rounds = integer("consistency_rounds", consistency_rounds, 1)
        self.filter_low_counts = flag("filter_low_counts", filter_low_counts)
        # auto: only when GUM starts from independent draws; from a prior (a public table
        # or the level above) appending would redraw a column given one marginal and drop
        # what the prior holds between it and the rest (bench/prior.py: CPS1988 at eps 0.3,
        # 3-way TVD 0.089 -> 0.081 from a public table)
        self.append_attributes = append_attributes if append_attributes == "auto" else \
            flag("append_attributes", append_attributes)
        if duplicate_scope not in DUPLICATE_SCOPES:
            raise DPSynError(f"duplicate_scope must be one of {DUPLICATE_SCOPES}")
        self.duplicate_scope = duplicate_scope
        self.numeric_decode = numeric_decode
        self.quantile_share = _share(quantile_share)
        if selection not in SELECTIONS:
            raise ParameterError(f"unknown selection {selection!r}; choose one of {SELECTIONS}")
        if method == "dpsyn" and selection != "auto":
            raise ParameterError("selection chooses PrivSyn's marginals: method='dpsyn' "
                                 "measures every pair")
        self.selection = selection
        self.group_by = parse_group_by(group_by)
        if self.group_by and method == "dpsyn":
            raise ParameterError("group_by needs method='privsyn'")
        if isinstance(prior_tolerance, bool) or not isinstance(prior_tolerance, (int, float)) \
                or not 0 <= prior_tolerance < math.inf:
            raise ParameterError(f"prior_tolerance must be a number >= 0, got {prior_tolerance!r}")
        self.prior_tolerance = float(prior_tolerance)
        self.adaptive_rounds = integer("adaptive_rounds", adaptive_rounds, 0)
        self.neighbour_shuffle = flag("neighbour_shuffle", neighbour_shuffle)
        self.gibbs_sweep = flag("gibbs_sweep", gibbs_sweep)
        self.polish = flag("polish", polish)
        self.denoise = flag("denoise", denoise)
        self.progress = flag("progress", progress)
        self.accountant: Accountant | None = None
        self.marginals = None
        self.recodes: dict = {}
        self.selected = None  # privsyn: the measured column sets
        self.unused = []  # the rounds' triples measured but not fitted (_keep_round)
        self.levels: list = []  # grouping.Level per level (one, ungrouped)
        self.public = None  # the public table's codes in the fitted domain
        self._public_raw = None  # ... as encoded, until the domain is known
        self.bins = None  # private quantile bins chosen in fit() (quantiles.Binning)
        self.timings: dict = {}  # seconds per stage, for benchmarks: NOT for release (they
        # grow with the true row count)
        self.history: list = []
        self.gum_seconds: list = []  # wall time at each history entry
        self._steps = dict.fromkeys(("shuffle", "sweep", "polish"), 0.0)
        self._calls = 0

    # -- fit: the only access to private data ------------------------------------------
    def fit(self, df, schema, public: pd.DataFrame | None = None) -> "Synthesizer":
        """Measure df (private) under the schema (public).  df: a pandas (or cuDF)
        DataFrame; with client=, also a dask DataFrame or the path of a table, a directory
        of tables or a glob, encoded and counted on the workers.  `public`: a public table
        of the same schema whose records seed GUM instead of independent 1-way draws."""
        if self.accountant is not None and self.accountant.ledger:
            raise DPSynError("this Synthesizer was already fitted; its budget is spent. "
                             "Create a new one to fit other data")
        t0 = time.perf_counter()
        if self.selection == "public" and public is None:
            raise ParameterError("selection='public' needs a public table: fit(df, schema, "
                                 "public=...)")
        self.schema = _load_schema(schema)
        self.names = [c.name for c in self.schema.synth_columns]
        workload, groups = self.check_plan(self.schema)
        sens = _sensitivity(self.sensitivity, self.schema)
        grid = quantiles.grid_schema(self.schema)  # private-quantile columns on their grid
        counts = None
        if self.group_by and _is_distributed_input(df):
            raise DPSynError("group_by runs in memory: fit a pandas DataFrame, without Dask")
        if _is_distributed_input(df):
            from gpu_dpsyn.distributed.counting import dask_counts
            # every partition is read, checked and encoded before the first charge
            counts = dask_counts(self.client, df, grid or self.schema, self.backend_name)
        else:
            column_labels(df, "the table")
            if len(df) > MAX_ROWS:  # InDif's exact integer sums assume fewer (2 n^2 < 2^63)
                raise DataError(f"the table has {len(df):,} rows; at most {MAX_ROWS:,} fit in "
                                "one Synthesizer")
            dev = encode(df, grid or self.schema, self.backend.xp)  # straight onto the device
        self.backend.prepare()  # kernels compiled before the first charge, not after
        pub = None
        if public is not None:
            column_labels(public, "the public table")
            try:
                check_columns(public, self.schema)
                pub = encode(public, grid or self.schema)
            except DataError as e:
                raise DataError(f"public table: {e}") from None
        self._noise_key = noise_key(self.seed if self.seeded else None, epsilon=self.epsilon,
                                    delta=self.delta, method=self.method, sensitivity=sens,
                                    conversion=self.conversion, mechanism=self.mechanism,
                                    schema=self.schema.to_dict(), workload=self.workload,
                                    group_by=self.group_by, selection=self.selection,
                                    # its records choose and start what is measured
                                    public=None if pub is None else _digest(pub),
                                    adaptive_rounds=self.adaptive_rounds,
                                    # what the rounds' records and the plan depend on
                                    # (the rounds fix GUM's iterations themselves)
                                    gum=[self.gum.alpha, self.gum.alpha_decay,
                                         self.gum.alpha_step, self.gum.mix],
                                    duplicate_scope=self.duplicate_scope,
                                    append_attributes=self.append_attributes,
                                    neighbour_shuffle=self.neighbour_shuffle,
                                    gibbs_sweep=self.gibbs_sweep, polish=self.polish,
                                    # the rounds' records are fitted to what it estimates
                                    denoise=self.denoise,
                                    prior_tolerance=self.prior_tolerance,
                                    consistency_rounds=self.consistency_rounds,
                                    filter_low_counts=self.filter_low_counts,
                                    max_cells=self.max_cells,
                                    quantile_share=self.quantile_share if
                                    quantiles.private_columns(self.schema) else None)
        unit = self.schema.unit_id
        if unit is not None and counts is None:  # enforce the bound the noise is calibrated
            keep = kept_rows(df, unit, sens, self._noise_key)  # to (dask_counts refuses ids)
            if keep is not None:
                idx = self.backend.asarray(keep)
                dev = [c[idx] for c in dev]
        if counts is None:
            counts = LocalCounts(self.backend, dev)
        self._public_raw = pub
        self.accountant = Accountant(self.epsilon, self.delta, sens, self.conversion)
        t1 = time.perf_counter()
        if self.method == "dpsyn":
            marginals = self._fit_dpsyn(counts, workload)
            self.levels = [Level((), marginals, measured_cells=[m.cells for m in marginals])]
        else:
            self.levels = self._fit_privsyn(counts, workload, groups)
        t2 = time.perf_counter()
        for lv in self.levels:
            # from noise levels and domains alone: a warning may show it
            lv.standard_error = total_standard_error(lv.marginals, lv.measured_cells)
            lv.total = self._estimate(lv.marginals, lv.measured_cells)
        self.marginals = [m for lv in self.levels for m in lv.marginals]
        total, self.n_standard_error = _pooled_total(self.levels)
        self.n_estimate = max(1, int(round(total)))
        if pub is not None and self.public is None:
            self.public = self._public_codes()
        self._noise_key = None  # spent: whoever holds the fitted object cannot redraw it
        self.timings.update(encode=t1 - t0, measure=t2 - t1,
                            consistency=time.perf_counter() - t2)
        return self

    def check_plan(self, schema) -> tuple:
        """(workload as column indices, each level's group columns) for this schema: the
        checks of fit() that need no data, callable before the table is read."""
        schema = _load_schema(schema)
        workload = _resolve_workload(self.workload, [c.name for c in schema.synth_columns])
        groups = resolve_levels(self.group_by, schema, workload, self.max_cells) \
            if self.group_by else [()]
        return workload, groups

    def _public_codes(self) -> list:
        """The public table's codes in the fitted domain (chosen bins, merged values)."""
        pub = self._public_raw
        pub = self.bins.remap(np, pub) if self.bins is not None else pub
        return [self.recodes[a].apply(np, c) if a in self.recodes else c
                for a, c in enumerate(pub)]

    def _public_selection(self) -> bool:
        return self._public_raw is not None and self.selection != "private"

    def _choose_bins(self, counts, fractions) -> None:
        """Buy the private-quantile columns' edges (charged first): the schema and domain
        from here on carry them, and the counts source recodes grid codes to bin codes."""
        if fractions:
            self.bins = quantiles.choose_bins(self.backend, counts, self.schema, fractions,
                                              self.accountant, self._noise_key)
            self.schema = self.bins.schema
            for a, recode in self.bins.recodes().items():
                counts.recode(a, recode)
        self.domain = self.schema.domain

    def _fit_dpsyn(self, counts, workload):
        # until the private quantile bins are chosen their count K bounds the domain
        domain, acc = self.schema.domain, self.accountant
        plan = dpsyn_plan(len(domain))
        weights = [1.0] * len(plan)
        for attrs, w in workload.items():
            if attrs in plan:
                weights[plan.index(attrs)] = w
            else:
                plan.append(attrs)
                weights.append(w)
        cells = check_domains(plan, domain, self.names, self.max_cells)
        q_fractions, rest = quantiles.split(self.schema, self.quantile_share)
        total_weight = left_sum(weights)
        fractions = [rest * w / total_weight for w in weights]
        q_cells = [c.private.cells for _, c in quantiles.private_columns(self.schema)]
        acc.choose_mechanism(q_fractions + fractions, q_cells + cells, self.mechanism)
        self._choose_bins(counts, q_fractions)
        with bar(self.progress, len(plan), "measure marginals") as pb:
            return measure(self.backend, counts, self.domain, plan, fractions, acc,
                           self._noise_key, self.names, pb)

    def _fit_privsyn(self, counts, workload, groups) -> list:
        """PrivSyn, level by level (one level, group (), without group_by): the noisy
        1-way marginals (with the group), then the selected pairs (with the group).  The
        selection is scored once (private InDif or the public table) and chosen per level
        by its own budget and cells."""
        acc, key, names = self.accountant, self._noise_key, self.names
        domain = list(self.schema.domain)  # private quantile bins: K, an upper bound
        d = len(domain)
        # the candidate pairs, from the schema (public): filtering only shrinks domains
        pairs0 = candidate_pairs(groups[0], domain, self.max_cells)
        q_fractions, rest = quantiles.split(self.schema, self.quantile_share)
        split = PRIVSYN_SPLIT if pairs0 else (0.0, 1.0, 0.0)
        if pairs0 and self._public_selection():  # selection is free: measure with its share
            split = (0.0, split[1] / (1 - split[0]), split[2] / (1 - split[0]))
        f_sel, f_one, f_marg = (rest * f for f in split)
        f_one, f_marg = f_one / len(groups), f_marg / len(groups)  # levels: sequential
        # ungrouped: a share of the marginals' budget goes to adaptive 3-way rounds
        # (adaptive.py; grouped targets stay within the kernels' 3 columns with the group)
        f_round = f_marg * adaptive.ROUND_SHARE if groups == [()] and d >= 3 and pairs0 \
            and self.adaptive_rounds else 0.0
        f_marg -= f_round
        if groups == [()]:
            # the 1-ways and the sets the user named are measured: refuse huge domains
            # before spending anything (grouped: resolve_levels did); a pair past
            # max_cells cannot be chosen, so it is left out of the candidates, and said
            check_domains([(a,) for a in range(d)] + list(workload), domain, names,
                          self.max_cells)
            _warn_pairs_left_out(domain, names, pairs0, self.max_cells)
        if f_round:  # the rounds' records S: at most FIT_ROWS, whatever the table
            self._check_memory(adaptive.FIT_ROWS, domain,
                               f"fitting the adaptive rounds' {adaptive.FIT_ROWS:,} records",
                               "adaptive_rounds=0 (--adaptive-rounds 0) needs none")
        acc.choose_mechanism([1.0], [1], "gaussian")
        self._choose_bins(counts, q_fractions)
        domain = list(self.domain)
        grouped = {a for g in groups for a in g}  # never merged: groups are public
        levels, scores, selected = [], {}, []
        for lv, group in enumerate(groups):
            g = (d,) if group else ()  # the group code: column d of the counts source
            if group:
                counts.cols[d:] = [group_code(self.backend.xp, counts.cols, group, domain)]
            dom = domain + [group_size(group, domain)] if group else domain
            label = names + [" x ".join(names[a] for a in group)] if group else names
            free = [a for a in range(d) if a not in group]
            plan = self._choose(scores, pairs0, group, domain, workload, f_marg, lv) \
                if lv else []
            # 1) noisy 1-way marginals, then merge values whose counts are lost in the noise
            one_plan = [(a,) + g for a in free]
            one = measure(self.backend, counts, dom, one_plan, c23_fractions(
                [dom[a] * (dom[d] if group else 1) for a in free],
                f_one if plan or not lv else f_one + f_marg,
                [workload.get((a,), 1.0) for a in free]), acc, key, label)
            measured = [m.cells for m in one]
            if lv == 0:
                self._merge_low_counts(one, free, grouped, counts, domain)
                self.domain = tuple(domain)
                dom = domain + [group_size(group, domain)] if group else domain
                if self._public_raw is not None:
                    self.public = self._public_codes()
                if pairs0:
                    scores = self._scores(counts, pairs0, one, f_sel)
                    # chosen at the whole budget: what the rounds do not take comes back
                    plan = self._choose(scores, pairs0, group, domain, workload,
                                        f_marg + f_round, lv)
            # 2) the selected marginals, budget ~ w c^(2/3)
            ext = [tuple(sorted(m + g)) for m in plan]
            mcells = check_domains(ext, dom, label, self.max_cells)
            selected += [tuple(label[a] for a in m) for m in ext]
            with bar(self.progress, len(ext), "measure marginals") as pb:
                sel = measure(self.backend, counts, dom, ext, c23_fractions(
                    mcells, f_marg, [workload.get(m, 1.0) for m in plan]), acc, key, label,
                    pb) if ext else []
            level = Level(group, one + sel, measured + mcells)
            if f_round:
                self._adaptive_rounds(counts, level, ext, workload, f_round,
                                      selected, label)
            levels.append(level)
        if pairs0:
            self.selected = selected
        return levels

    def _adaptive_rounds(self, counts, level, plan, workload, f_round, selected,
                         label) -> None:
        """adaptive.py, in up to adaptive_rounds rounds: fit GUM's records S to the level's
        marginals so far (warm from the last round's), keep the last round's triples only
        if S realised their error (adaptive.realised; else drop them and stop), measure the
        noisy errors against S of the candidate triples that could be worth measuring,
        measure those that are; after a round that measures none (or the last), what is
        left measures the level's multi-way marginals again, pooled."""
        acc, key, dom = self.accountant, self._noise_key, self.domain
        cap = min(adaptive.TRIPLE_MAX_CELLS, self.max_cells)
        measured, left, synth, n_syn = list(plan), f_round, None, None
        f_multi = left_sum(e.fraction for e in acc.ledger if e.label == "marginal" and
                           len(e.columns) > 1)  # what the chosen marginals had so far
        pending = None  # the last round's triples and S's histograms of them before it
        for r in range(self.adaptive_rounds):
            f_r = left / (self.adaptive_rounds - r)
            f_err, f_tri = f_r * adaptive.ERROR_SHARE, f_r * (1 - adaptive.ERROR_SHARE)
            trial, n_hat = self._trial(level)
            fitted = pending is not None
            if fitted:  # S refitted with the last round's triples: does GUM realise them?
                synth = self._records(Level((), trial, level.measured_cells), n_syn, synth)
                kept, pending = self._keep_round(level, trial, synth, pending, selected,
                                                 label), None
                if not kept:
                    break
            top = [m.cells for m in _top(level.marginals) if len(m.attrs) > 1]
            forgone = adaptive.pooling_gain(top, f_multi * acc.rho, f_tri * acc.rho,
                                            acc.sensitivity)
            cands = adaptive.candidate_triples(dom, range(len(dom)), measured, cap)
            cells = [math.prod(dom[a] for a in t) for t in cands]
            keep = adaptive.could_gain(cells, n_hat, f_tri * acc.rho, acc.sensitivity,
                                       forgone)
            cands, cells = [t for t, k in zip(cands, keep) if k], \
                [c for c, k in zip(cells, keep) if k]
            if not cands:
                break
            # N is fixed by the first round (noisy n_hat, public cap), so later rounds
            # start from the last round's records
            n_syn = n_syn or min(n_hat, adaptive.FIT_ROWS)
            if not fitted:
                synth = self._records(Level((), trial, level.measured_cells), n_syn, synth)
            noisy = triple_errors.measure_errors(self.backend, counts, synth, dom, cands, n_hat,
                                            acc, f_err, key)
            left -= f_err
            chosen = [cands[i] for i in adaptive.choose(noisy, cands, cells, f_tri * acc.rho,
                                                        acc.sensitivity, forgone)]
            if not chosen:
                break
            pending = (chosen, self._histograms(synth, chosen))
            self._measure_more(counts, level, chosen, f_tri, workload, label)
            left -= f_tri
            f_multi += f_tri
            measured += chosen
            selected += [tuple(label[a] for a in m) for m in chosen]
        if pending is not None:  # the last round's: one more fit of S to judge them
            trial, _ = self._trial(level)
            synth = self._records(Level((), trial, level.measured_cells), n_syn, synth)
            self._keep_round(level, trial, synth, pending, selected, label)
        again = [m.attrs for m in _top(level.marginals) if len(m.attrs) > 1]
        if left > 1e-12 * f_round and again:  # measure again, pooled: none left unspent
            self._measure_more(counts, level, again, left, workload, label, pool=True)

    def _trial(self, level):
        """A consistent copy of the level's marginals, and its total (the noisy count)."""
        trial = [dataclasses.replace(m, values=m.values.copy()) for m in level.marginals]
        return trial, max(1, int(round(self._estimate(trial, level.measured_cells))))

    def _estimate(self, marginals, measured_cells) -> float:
        """The noisy marginals, in place, as GUM's targets: each multi-way one's cells by
        their posterior means (empirical_bayes.py; denoise=False keeps them as measured),
        then consistent and non-negative.  Returns their common total."""
        if self.denoise:
            denoise_marginals(marginals, measured_cells)
        return make_consistent(marginals, max_rounds=self.consistency_rounds)

    def _histograms(self, synth, sets) -> list:
        """S's histograms of the column sets, on the host (adaptive.realised reads them)."""
        return [self.backend.to_numpy(h) for h in
                triple_errors.histograms(self.backend, synth, self.domain, sets)]

    def _keep_round(self, level, trial, synth, pending, selected, label) -> bool:
        """Keep a round's triples if S, refitted with them, realised at least
        adaptive.REALISED of their error; else take them out of the level's targets
        (their charge stays in the ledger; self.unused names them)."""
        chosen, before = pending
        at = {m.attrs: m for m in trial}
        targets = [at[t] for t in chosen]
        if adaptive.realised(before, self._histograms(synth, chosen), targets) >= \
                adaptive.REALISED:
            return True
        drop = set(chosen)
        keep = [i for i, m in enumerate(level.marginals) if m.attrs not in drop]
        level.marginals = [level.marginals[i] for i in keep]
        level.measured_cells = [level.measured_cells[i] for i in keep]
        names = [tuple(label[a] for a in t) for t in chosen]
        selected[:] = [s for s in selected if s not in names]
        self.unused += names
        return False

    def _measure_more(self, counts, level, sets, fraction, workload, label,
                      pool=False) -> None:
        """Measure the column sets (budget ~ w c^(2/3)) into the level: as new marginals, or
        pooled with the level's measurements of the same sets."""
        mcells = check_domains(sets, self.domain, label, self.max_cells)
        with bar(self.progress, len(sets), "measure marginals") as pb:
            new = measure(self.backend, counts, self.domain, sets, c23_fractions(
                mcells, fraction, [workload.get(m, 1.0) for m in sets]), self.accountant,
                self._noise_key, label, pb)
        if not pool:
            level.marginals += new
            level.measured_cells += mcells
            return
        at = {m.attrs: i for i, m in enumerate(level.marginals)}
        for m in new:
            level.marginals[at[m.attrs]] = targets.pool(level.marginals[at[m.attrs]], m)

    def _records(self, level, n: int, start=None) -> list:
        """n records fitted by GUM to the level's (consistent) marginals, as codes on the
        device, from `start` (records of an earlier fit) or independent draws: S for the
        adaptive rounds (their GUM curves are not kept)."""
        key, call = rng.split_key(self.seed), self._reserve_calls(1)
        cols = self._init_records(n, key, call, level) if start is None or \
            len(start[0]) != n else start
        cfg = dataclasses.replace(self.gum, iterations="auto",
                                  max_iterations=adaptive.FIT_ITERATIONS)
        cols = self._fit_level(cols, level, self._targets(n, level), key, call,
                               self.public is not None or cols is start, cfg)
        self.history, self.gum_seconds = [], []
        return cols

    def _merge_low_counts(self, one, free, grouped, counts, domain) -> None:
        """Filtering (first level): values of a column whose noisy count (summed over the
        groups) is below 3 sigma are merged; group columns are kept whole."""
        if not self.filter_low_counts:
            return
        for i, a in enumerate(free):
            if a in grouped:
                continue
            m = one[i]
            r = low_count_recode(m if len(m.attrs) == 1 else one_way_of(m, a))
            if r is not None:
                self.recodes[a] = r
                one[i] = recoded(m, r)
                counts.recode(a, r)  # on every partition, for a distributed source
                domain[a] = r.size

    def _scores(self, counts, pairs, one, f_sel) -> dict:
        """Each candidate pair's InDif: from the public table (free), or noisy (charged)."""
        if self._public_selection():
            s = public_scores(self.backend, self.public, self.domain, pairs, private_row_estimate(one))
        else:
            pairs, s = measure_indif(self.backend, counts, self.domain, self.names,
                                     self.accountant, f_sel, self._noise_key, pairs)
        return dict(zip(pairs, s))

    def _choose(self, scores, pairs0, group, domain, workload, f_marg, lv) -> list:
        """A level's marginals: PrivSyn's greedy choice over the pairs without a group
        column, at this level's budget and cells (the group multiplies them); the first
        level also connects isolated attributes (later ones start from its records) and,
        ungrouped, combines triangles (grouped targets stay within the kernels' 3
        columns)."""
        size = group_size(group, domain)
        # a finer level's group may make a pair too large: leave it out (not refuse it
        # after the levels above were charged)
        fits = set(candidate_pairs(group, domain, self.max_cells))
        pairs = [p for p in pairs0 if p in fits]
        if not pairs:
            return []
        sc = np.array([scores[p] for p in pairs])
        cells = [domain[a] * domain[b] * size for a, b in pairs]
        forced = [pairs.index(w) for w in workload if w in pairs]
        chosen = greedy_select(sc, cells, f_marg * self.accountant.rho,
                               self.accountant.sensitivity, forced)
        if lv == 0:
            chosen = connect_isolated(chosen, pairs, sc, len(domain))
        plan = [pairs[i] for i in chosen]
        if group:
            return plan
        plan = combine_cliques(plan, domain, min(COMBINE_MAX_CELLS, self.max_cells))
        return plan + [w for w in workload if len(w) == 3 and w not in plan]

    # -- sample: post-processing ----------------------------------------------------
    def _targets(self, n: int, level=None):
        """The most detailed marginals (those inside no other) of a level (default: the
        only one), scaled to n records."""
        out = []
        for m in _top((level or self.levels[-1]).marginals):
            tot = m.values.sum()
            t = m.values * (n / tot) if tot > 0 else np.full(m.cells, n / m.cells)
            out.append((m.attrs, m.shape, t))
        return out

    def _init_records(self, n: int, key, call: int, level=None) -> list:
        xp, be = self.backend.xp, self.backend
        if self.public is not None:  # a public prior: resample its records to n
            n_pub = len(self.public[0])
            u = be.uniforms(key, n, 0, rng.PRIOR, call)
            idx = xp.minimum(xp.floor(u * n_pub).astype(xp.int64), n_pub - 1)
            return [xp.ascontiguousarray(be.asarray(c)[idx]) for c in self.public]
        # independent columns from the first level's 1-way marginals; a grouped level
        # draws its group code (a column after the table's) and splits it
        lv, sizes = level or self.levels[0], list(self.domain)
        if lv.group:
            sizes.append(group_size(lv.group, self.domain))
            one = {a: one_way_of(m, a).values for m in lv.marginals for a in m.attrs
                   if a not in lv.group}
            one.update({a: np.eye(sizes[a])[0] for a in lv.group})  # written from the code
        else:
            one = {m.attrs[0]: m.values for m in lv.marginals if len(m.attrs) == 1}
        counts = []
        for a, size in enumerate(sizes):
            v = one[a] if a in one else np.ones(size)
            v = v if v.sum() > 0 else np.ones(size)
            counts.append(apportion(np, v.astype(np.float64), float(n)).astype(np.int64))
        cols = be.init_records(counts, key, call)
        if lv.group:
            split_group(xp, cols[-1], lv.group, self.domain, cols)
        return cols[:len(self.domain)]

    def sample(self, n: int | None = None) -> pd.DataFrame:
        if self.marginals is None:
            raise DPSynError("call fit(df, schema) before sample()")
        n = self._estimated_rows() if n is None else self.check_sample(n)
        if self._grouped:
            return self._generate(n, None, self._reserve_calls(len(self.levels)))
        return self._generate(n, self._targets(n), self._reserve_calls(1))

    @property
    def _grouped(self) -> bool:
        return bool(self.levels[0].group) or len(self.levels) > 1

    def sample_to(self, path, n: int | None = None, *, batch_rows: int | None = None) -> dict:
        """Write n synthetic rows (default: the DP estimate) as Parquet parts under the
        directory `path`: independent batches, one Dask task each on the client's workers
        (in this process without a client), every batch fitted to its exact integer share
        of the targets.  batch_rows: rows per batch (default: from the workers' memory
        limits and thread count; give it for output independent of the cluster).
        Returns {"path", "rows", "batches", "batch_rows", "parts", "gum_tvd" (each batch's
        final mean TVD to its targets), "gum_history" (the first batch's GUM curve)}."""
        if self.marginals is None:
            raise DPSynError("call fit(df, schema) before sample_to()")
        if self._grouped:  # its batches would each need every level
            raise DPSynError("a group_by fit samples in memory: use sample(n)")
        from gpu_dpsyn.distributed.sampling import sample_to
        n = self._estimated_rows(_row_count) if n is None else _row_count(n)
        return sample_to(self, path, n, batch_rows)

    def _reserve_calls(self, k: int) -> int:
        """The first of k fresh values of the post-processing RNG's call word: sample()
        takes one, sample_to() one per batch, so no two draws of a seed share a stream."""
        call = self._calls
        if call + k > 1 << 32:  # a 32-bit counter word
            raise DPSynError("this Synthesizer has drawn 2^32 samples or batches; fit anew")
        self._calls += k
        return call

    def _generate(self, n: int, targets, call: int) -> pd.DataFrame:
        """n records fitted to targets ((attrs, shape, counts summing to n)) by GUM, then
        decoded; the RNG streams are keyed by the seed and `call`.  targets=None: every
        level's, at n, level l's GUM with call + l (a grouped fit reserves one per level)."""
        key = rng.split_key(self.seed)
        t0 = time.perf_counter()
        cols = self._init_records(n, key, call)
        steps = [(self.levels[0], targets)] if targets is not None else \
            [(lv, self._targets(n, lv)) for lv in self.levels]
        self.history, self.gum_seconds = [], []
        self._steps = dict.fromkeys(self._steps, 0.0)
        for i, (lv, tg) in enumerate(steps):
            cols = self._fit_level(cols, lv, tg, key, call + i,
                                   self.public is not None or i > 0)
        self.backend.synchronize()
        t1 = time.perf_counter()
        codes = [self.backend.to_numpy(c) for c in cols]
        for a, r in self.recodes.items():
            codes[a] = undo(codes[a], r, key, call)
        be = self.backend
        out = decode(codes, self.schema, self.seed, call, self.numeric_decode,
                     lambda j, m: be.to_numpy(be.uniforms(key, m, j, rng.DECODE, call)))
        # gum: the records' whole fit; shuffle, sweep, polish: those steps' part of it
        self.timings.update(gum=t1 - t0, **self._steps, decode=time.perf_counter() - t1)
        return out

    def _timed(self, step: str, t0: float) -> None:
        """Add the time since t0 to the generation's step (benchmarks only)."""
        self.backend.synchronize()
        self._steps[step] += time.perf_counter() - t0

    def _fit_level(self, cols, lv, targets, key, call: int, prior: bool, cfg=None) -> list:
        """One level's GUM (and attribute appending) on the records cols; a grouped level
        fits its group code as one more column, then writes the group columns from it.
        cfg: the adaptive rounds' GUM settings.  Their records S get the Gibbs sweep and
        the polish too: S ranks the triples' errors, and without them it shows errors the
        release will not have, which buys triples GUM then cannot fit (held-out tables,
        README).  Neither without GUM iterations: they fit the targets, and iterations=0
        asks for the independent draws."""
        be, d = self.backend, len(self.domain)
        if lv.group:
            cols = cols + [group_code(be.xp, cols, lv.group, self.domain)]
        append = not prior if self.append_attributes == "auto" else self.append_attributes
        st = plan_structure([t[0] for t in targets], len(cols), append, self.duplicate_scope)
        cfg = cfg or self.gum
        gum_targets = [project(*targets[i], st.attrs[i]) for i in st.gum_targets]
        groups, slack = [st.groups[i] for i in st.gum_targets], self._slack(lv, targets, st)
        with bar(self.progress, cfg.limit, "GUM iterations") as pb:
            res = run_gum(be, gum_targets, cols, key, call, cfg, pb, groups, slack)
        for x, i in st.appended:
            append_attribute(be, res.cols, x, *targets[i], key, call)
        # a public prior's structure is kept; grouped levels fit a group code
        free = not lv.group and self.public is None
        if self.neighbour_shuffle and free:
            # GUM's Duplicates leave copies of a few donors (shuffle.py)
            t0 = time.perf_counter()
            neighbour_shuffle(be, res.cols, [t[0] for t in targets], self.domain, key, call)
            self._timed("shuffle", t0)
        swept = self.gibbs_sweep and free and cfg.limit > 0
        polished = self.polish and free and cfg.limit > 0
        if swept:
            # GUM's 3-way structure where no target holds it (gibbs.py): redraw
            t0 = time.perf_counter()
            with bar(self.progress, len(res.cols), "Gibbs sweep") as pb:
                skipped = gibbs_sweep(be, res.cols, targets, self.domain, key, call, pb)
            self._timed("sweep", t0)
            self._warn_left("the Gibbs sweep", skipped, "as GUM made them: their fit")
            if not polished:  # the repair: one GUM iteration of Duplicates (gibbs.py)
                # a Duplicate that copies all of an appended column's anchors copies it
                # too (the sweep drew it from its target given them)
                carried = [sorted(set(g).union(x for x, i in st.appended
                                               if set(st.attrs[i]) <= set(g))) for g in groups]
                rep = run_gum(be, gum_targets, res.cols, key, call, REPAIR, None, carried,
                              slack, step0=cfg.limit)
                res.history += rep.history[1:]
                res.seconds += [res.seconds[-1] + t for t in rep.seconds[1:]]
        if polished:
            # GUM stops where its moves for one target undo another's (polish.py); after
            # the sweep it is the repair, and moves only the records it must (a column
            # too large for its table is one the sweep left as it was: the same bound)
            t0 = time.perf_counter()
            with bar(self.progress, len(res.cols), "polish") as pb:
                skipped = polish(be, res.cols, targets, self.domain, key, call, pb)
            self._warn_left("the polish", skipped, "as they were: their table")
            self._timed("polish", t0)
            err = target_errors(be, res.cols, gum_targets)
            res.history.append(float(err.mean()) if err.size else 0.0)
            res.seconds.append(res.seconds[-1] + time.perf_counter() - t0)
        if self.neighbour_shuffle and (swept or polished):  # the draws' and moves' copies
            t0 = time.perf_counter()
            neighbour_shuffle(be, res.cols, [t[0] for t in targets], self.domain, key,
                              call, sweep=1)
            self._timed("shuffle", t0)
        start = self.gum_seconds[-1] if self.gum_seconds else 0.0
        self.history += res.history
        self.gum_seconds += [start + t for t in res.seconds]
        self.structure = st
        if lv.group:
            split_group(be.xp, res.cols[d], lv.group, self.domain, res.cols)
        return res.cols[:d]

    def _warn_left(self, step: str, skipped, how: str) -> None:
        if skipped:
            warnings.warn(f"{step} left columns " + ", ".join(self.names[a] for a in skipped)
                          + f" {how} would pass gibbs.MAX_CONTEXT_CELLS (contexts x values)",
                          stacklevel=4)

    def _slack(self, lv, targets, st):
        """Per GUM target: prior_tolerance noise standard deviations, in counts at this
        sample's size (a projected target sums cells: its noise adds up)."""
        k = self.prior_tolerance
        if k == 0:
            return None
        share = {m.attrs: m.sigma / m.values.sum() if m.values.sum() > 0 else 0.0
                 for m in lv.marginals}
        out = []
        for i in st.gum_targets:
            attrs, shape, t = targets[i]
            summed = math.prod(n for a, n in zip(attrs, shape) if a not in st.attrs[i])
            out.append(k * share[attrs] * float(np.sum(t)) * math.sqrt(summed))
        return out

    def _estimated_rows(self, check=None) -> int:
        """The DP estimate of the row count, with a warning when the noise makes it
        unreliable and an error naming it when it cannot be sampled."""
        n, se = self.n_estimate, self.n_standard_error
        if se > COUNT_RELATIVE_SE * n:
            warnings.warn(f"the row count is estimated at {n:,} with a standard error of "
                          f"about {se:,.0f} from the privacy noise; choose the size with "
                          "sample(n) (--rows N)",
                          RowCountWarning, stacklevel=3)
        try:
            return (check or self.check_sample)(n)
        except DataError as e:
            raise DataError(f"the row count is estimated at {n:,} (standard error about "
                            f"{se:,.0f}): {e}; choose the size with sample(n) (--rows N)") \
                from None

    def check_sample(self, n, schema=None) -> int:
        """sample(n)'s refusals.  Given the schema, callable before fit() spends the budget:
        the schema's domain bounds the fitted one (filtering only merges values)."""
        if schema is None and self.marginals is None:
            raise DPSynError("check_sample(n) before fit() needs the schema")
        n = _row_count(n)
        self._check_memory(n, self.domain if schema is None else _load_schema(schema).domain)
        return n

    def _check_memory(self, n: int, domain, what: str | None = None,
                      instead: str = "ask for fewer rows") -> None:
        """Refuse a sample that cannot fit, before allocating it."""
        need = n * (sum(code_dtype(d).itemsize for d in domain) + WORK_BYTES_PER_ROW
                    + (GROUP_BYTES_PER_ROW if self.group_by else 0))
        free = self.backend.free_memory()
        if free is not None and need > free:
            raise DataError(f"{what or f'sample({n:,})'} needs about {need / 2**30:.1f} GiB "
                            f"of {self.backend.name.upper()} memory, only "
                            f"{free / 2**30:.1f} GiB is free; {instead}")

    # -- reporting --------------------------------------------------------------------
    @property
    def ledger(self) -> list:
        return [] if self.accountant is None else list(self.accountant.ledger)

    def privacy_report(self) -> dict:
        if self.accountant is None:
            raise DPSynError("nothing was measured yet: call fit() first")
        rep = self.accountant.summary()
        rep["method"] = self.method
        d, unit = self.accountant.sensitivity, self.schema.unit_id
        rep["neighbouring"] = "add or remove all records of one individual"
        rep["unit_of_privacy"] = (
            f"an individual: the records sharing a value of {unit!r}; at most {d} of them "
            "(a uniformly random subset, chosen before anything was measured) were used"
            if unit is not None else
            "an individual: one record" if d == 1 else
            f"an individual, who contributes at most {d} records (declared in the schema or "
            "by sensitivity; not enforced: the schema has no individual id column)")
        rep["seeded"] = self.seeded  # a seeded release's noise is reproducible
        if self.bins is not None:  # DP outputs, like the noisy counts
            rep["private_bins"] = {k: list(v) for k, v in self.bins.edges.items()}
        if self.selected is not None:
            rep["selected_marginals"] = [list(m) for m in self.selected]
        if self.unused:  # charged (in the ledger), but GUM could not realise them
            rep["unused_marginals"] = [list(m) for m in self.unused]
        if self.method == "privsyn":
            rep["selection"] = (
                "public: chosen from the public table's pair dependences (no budget spent)"
                if self._public_selection() else
                "private: noisy InDif scores of the private table (charged in the ledger)"
                if any(e.label == "indif" for e in self.accountant.ledger) else
                "none needed: no pair of columns to choose from")
            if any(e.label == "3-way errors" for e in self.accountant.ledger):
                rep["selection"] += (
                    "; then the column triples where records fitted to those measurements "
                    "missed the private table most (noisy errors, charged in the ledger)")
        if self._public_raw is not None:
            rep["prior"] = ("GUM started from the public table's records: public input, "
                            "not covered by the guarantee and costing none of it")
        if self.group_by:
            rep["group_by"] = [list(lv) for lv in self.group_by]
            rep["grouping"] = PARALLEL_NOTE
        return rep


def _top(marginals) -> list:
    """The marginals inside no other one."""
    sets = [set(m.attrs) for m in marginals]
    return [m for m, s in zip(marginals, sets) if not any(s < o for o in sets)]


def _warn_pairs_left_out(domain, names, pairs, max_cells: int) -> None:
    """One LargeDomainWarning naming the largest pair past max_cells (from the schema:
    public), and how many more: PrivSyn leaves them out of its choice."""
    fit = set(pairs)
    over = sorted(((domain[a] * domain[b], a, b) for a, b in
                   itertools.combinations(range(len(domain)), 2) if (a, b) not in fit),
                  key=lambda x: (-x[0], x[1], x[2]))
    if not over:
        return
    c, a, b = over[0]
    more = f" (and {len(over) - 1} more pair{'s' if len(over) > 2 else ''})" \
        if len(over) > 1 else ""
    warnings.warn(f"columns {names[a]!r} ({domain[a]:,} values) and {names[b]!r} "
                  f"({domain[b]:,} values) make a pair marginal of {c:,} cells, more than "
                  f"max_cells={max_cells:,}{more}: PrivSyn leaves that pair out, so their "
                  "joint distribution is not modelled; bin or group their values in the "
                  "schema to keep it", LargeDomainWarning, stacklevel=4)


def _pooled_total(levels) -> tuple:
    """(row count estimate, its standard error): the levels' common totals pooled by
    inverse variance (one level: its own)."""
    if len(levels) == 1:
        return levels[0].total, levels[0].standard_error
    w = np.array([1.0 / max(lv.standard_error, 1e-12) ** 2 for lv in levels])
    t = np.array([lv.total for lv in levels])
    return float((w * t).sum() / w.sum()), float(1.0 / np.sqrt(w.sum()))


def _row_count(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_ROWS:
        raise DataError(f"number of rows must be an integer in [1, {MAX_ROWS}], got {n!r}")
    return int(n)


def _is_distributed_input(df) -> bool:
    """A path or a dask collection: read through Dask (by module name, so pandas input
    never imports dask)."""
    return isinstance(df, (str, os.PathLike)) or \
        type(df).__module__.split(".")[0] in ("dask", "dask_expr", "dask_cudf")


def _digest(codes) -> str:
    """SHA-256 of code columns (host arrays): a public table's part of a seeded key."""
    h = hashlib.sha256()
    for c in codes:
        c = np.ascontiguousarray(np.asarray(c), dtype=np.int64)
        h.update(len(c).to_bytes(8, "little") + c.tobytes())
    return h.hexdigest()


def _budget_number(v):
    """epsilon or delta: NumPy scalars as Python floats (np.float32 is no float subclass)."""
    return float(v) if isinstance(v, (np.integer, np.floating)) else v


def _load_schema(schema) -> Schema:
    if not isinstance(schema, (Schema, dict, str, os.PathLike)):
        raise SchemaError("schema must be a dict, a Schema or the path of a JSON file, got "
                          f"{type(schema).__name__}")
    return load_schema(schema)


def _share(share) -> float:
    """quantile_share: the budget fraction for all private-quantile columns together."""
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise ParameterError(f"quantile_share must be a number in (0, 1), got {share!r}")
    return float(share)


def _sensitivity(given, schema) -> int:
    """Records per individual: an explicit value may not undercut the schema's."""
    declared = schema.max_records_per_individual
    if given is None:
        return declared or 1
    if declared and given < declared:
        raise PrivacyParameterError(
            f"sensitivity={given} is below the schema's max_records_per_individual "
            f"({declared} records): it would under-count what one individual contributes")
    return given


def _check_workload_shape(workload) -> list:
    """[(column names, weight)], validated for form; names are checked in fit()."""
    if workload is None:
        return []
    items = workload.items() if isinstance(workload, dict) else workload
    out = []
    for entry in items:
        try:
            cols, w = entry
        except (TypeError, ValueError):
            raise DPSynError(f"workload entries are (columns, weight), got {entry!r}") from None
        cols = (cols,) if isinstance(cols, str) else tuple(cols)
        if not 1 <= len(cols) <= 3 or len(set(cols)) != len(cols):
            raise DPSynError(f"workload column sets have 1 to 3 distinct columns, got {cols!r}")
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not (w > 0 and
                                                                          math.isfinite(w)):
            raise DPSynError(f"workload weight for {cols} must be a positive number, got {w!r}")
        out.append((cols, float(w)))
    return out


def _resolve_workload(workload, names) -> dict:
    out = {}
    for cols, w in workload:
        unknown = [c for c in cols if c not in names]
        if unknown:
            raise DataError(f"workload names unknown column(s) {unknown}; columns are {names}")
        out[tuple(sorted(names.index(c) for c in cols))] = w
    return out


