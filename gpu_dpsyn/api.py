"""The public API: Synthesizer(epsilon, delta).fit(df, schema).sample(n)."""
from __future__ import annotations

import math
import os
import time
import warnings

import numpy as np
import pandas as pd

from . import quantiles, rng
from .backend import get_backend
from .checks import column_labels, flag, integer
from .consistency import make_consistent, total_standard_error
from .dtypes import MAX_ROWS
from .encoding import check_columns, code_dtype, decode, encode
from .errors import (DataError, DPSynError, ParameterError, PrivacyParameterError,
                     RowCountWarning, SchemaError)
from .filtering import low_count_recode, recoded_one_way, undo
from .gum import (DUPLICATE_SCOPES, GUMConfig, append_attribute, apportion, plan_structure,
                  project, run_gum)
from .marginals import DEFAULT_MAX_CELLS, LocalCounts, check_domains, dpsyn_plan, measure
from .privacy import Accountant
from .privacy.bounding import kept_rows
from .privacy.keys import noise_key
from .privacy.samplers import MAX_NOISE_CELLS
from .progress import bar
from .schema import Schema, load_schema
from .selection import (COMBINE_MAX_CELLS, c23_fractions, combine_cliques, connect_isolated,
                        greedy_select, measure_indif)

METHODS = ("privsyn", "dpsyn")
MECHANISMS = ("auto", "gaussian", "laplace")
PRIVSYN_SPLIT = (0.1, 0.1, 0.8)  # InDif selection, 1-way marginals, selected marginals
WORK_BYTES_PER_ROW = 64  # sort keys, order, removed slots and cell index of a GUM update
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
    Numeric columns with `"bins": {"private_quantiles": K}` get DP quantile edges first,
    bought with quantile_share of the budget (default 5%, split equally among them; the
    method's split scales to the rest): see quantiles.py.

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
                 append_attributes: bool = True, duplicate_scope: str = "neighbours",
                 numeric_decode: str = "uniform", quantile_share: float = quantiles.DEFAULT_SHARE,
                 progress: bool = True, client=None):
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
        self.append_attributes = flag("append_attributes", append_attributes)
        if duplicate_scope not in DUPLICATE_SCOPES:
            raise DPSynError(f"duplicate_scope must be one of {DUPLICATE_SCOPES}")
        self.duplicate_scope = duplicate_scope
        self.numeric_decode = numeric_decode
        self.quantile_share = _share(quantile_share)
        self.progress = flag("progress", progress)
        self.accountant: Accountant | None = None
        self.marginals = None
        self.recodes: dict = {}
        self.selected = None  # privsyn: the measured column sets
        self.public = None
        self.bins = None  # private quantile bins chosen in fit() (quantiles.Binning)
        self.timings: dict = {}  # seconds per stage, for benchmarks: NOT for release (they
        # grow with the true row count)
        self.history: list = []
        self.gum_seconds: list = []  # wall time at each history entry
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
        self.schema = _load_schema(schema)
        sens = _sensitivity(self.sensitivity, self.schema)
        grid = quantiles.grid_schema(self.schema)  # private-quantile columns on their grid
        counts = None
        if _is_distributed_input(df):
            from .distributed.counting import dask_counts
            # every partition is read, checked and encoded before the first charge
            counts = dask_counts(self.client, df, grid or self.schema, self.backend_name)
        else:
            column_labels(df, "the table")
            if len(df) > MAX_ROWS:  # InDif's exact integer sums assume fewer (2 n^2 < 2^63)
                raise DataError(f"the table has {len(df):,} rows; at most {MAX_ROWS:,} fit in "
                                "one Synthesizer")
            dev = encode(df, grid or self.schema, self.backend.xp)  # straight onto the device
        self.backend.prepare()  # kernels compiled before the first charge, not after
        self._noise_key = noise_key(self.seed if self.seeded else None, epsilon=self.epsilon,
                                    delta=self.delta, method=self.method, sensitivity=sens,
                                    conversion=self.conversion, mechanism=self.mechanism,
                                    schema=self.schema.to_dict(), workload=self.workload)
        unit = self.schema.unit_id
        if unit is not None and counts is None:  # enforce the bound the noise is calibrated
            keep = kept_rows(df, unit, sens, self._noise_key)  # to (dask_counts refuses ids)
            if keep is not None:
                idx = self.backend.asarray(keep)
                dev = [c[idx] for c in dev]
        if counts is None:
            counts = LocalCounts(self.backend, dev)
        pub = None
        if public is not None:
            column_labels(public, "the public table")
            try:
                check_columns(public, self.schema)
                pub = encode(public, grid or self.schema)
            except DataError as e:
                raise DataError(f"public table: {e}") from None
        self.names = [c.name for c in self.schema.synth_columns]
        workload = _resolve_workload(self.workload, self.names)
        self.accountant = Accountant(self.epsilon, self.delta, sens, self.conversion)
        t1 = time.perf_counter()
        if self.method == "dpsyn":
            self.marginals = self._fit_dpsyn(counts, workload)
        else:
            self.marginals = self._fit_privsyn(counts, workload)
        t2 = time.perf_counter()
        # from noise levels and domains alone: a warning may show it
        self.n_standard_error = total_standard_error(self.marginals, self._measured_cells())
        total = make_consistent(self.marginals, max_rounds=self.consistency_rounds)
        self.n_estimate = max(1, int(round(total)))
        if pub is not None:
            pub = self.bins.remap(np, pub) if self.bins is not None else pub
            self.public = [self.recodes[a].apply(np, c) if a in self.recodes else c
                           for a, c in enumerate(pub)]
        self._noise_key = None  # spent: whoever holds the fitted object cannot redraw it
        self.timings.update(encode=t1 - t0, measure=t2 - t1,
                            consistency=time.perf_counter() - t2)
        return self

    def _measured_cells(self) -> list:
        """Noisy cells behind each marginal's total: a 1-way marginal whose low counts were
        merged still sums every cell measured."""
        return [self.recodes[m.attrs[0]].lut.size if len(m.attrs) == 1 and
                m.attrs[0] in self.recodes else m.cells for m in self.marginals]

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
        fractions = [rest * w / sum(weights) for w in weights]
        q_cells = [c.private.cells for _, c in quantiles.private_columns(self.schema)]
        acc.choose_mechanism(q_fractions + fractions, q_cells + cells, self.mechanism)
        self._choose_bins(counts, q_fractions)
        with bar(self.progress, len(plan), "measure marginals") as pb:
            return measure(self.backend, counts, self.domain, plan, fractions, acc,
                           self._noise_key, self.names, pb)

    def _fit_privsyn(self, counts, workload):
        acc, key, names = self.accountant, self._noise_key, self.names
        domain = list(self.schema.domain)  # private quantile bins: K, an upper bound
        d = len(domain)
        q_fractions, rest = quantiles.split(self.schema, self.quantile_share)
        f_sel, f_one, f_marg = (rest * f for f in (PRIVSYN_SPLIT if d > 1 else (0.0, 1.0, 0.0)))
        # every pair is histogrammed for InDif and workload triples are measured: refuse
        # huge domains before spending anything (filtering only shrinks them)
        check_domains(dpsyn_plan(d) + [w for w in workload if len(w) == 3], domain, names,
                      self.max_cells)
        acc.choose_mechanism([1.0], [1], "gaussian")
        self._choose_bins(counts, q_fractions)
        domain = list(self.domain)
        # 1) noisy 1-way marginals, then merge values whose counts are lost in the noise
        one_plan = [(a,) for a in range(d)]
        one = measure(self.backend, counts, domain, one_plan, c23_fractions(
            domain, f_one, [workload.get(m, 1.0) for m in one_plan]), acc, key, names)
        if self.filter_low_counts:
            for a, m in enumerate(one):
                r = low_count_recode(m)
                if r is not None:
                    self.recodes[a] = r
                    one[a] = recoded_one_way(m, r)
                    counts.recode(a, r)  # on every partition, for a distributed source
                    domain[a] = r.size
        self.domain = tuple(domain)
        if d == 1:
            return one
        # 2) noisy InDif of every pair, greedy selection (post-processing from here on)
        pairs, scores = measure_indif(self.backend, counts, domain, names, acc, f_sel, key)
        cells = [domain[a] * domain[b] for a, b in pairs]
        forced = [pairs.index(w) for w in workload if len(w) == 2]
        chosen = greedy_select(scores, cells, f_marg * acc.rho, acc.sensitivity, forced)
        chosen = connect_isolated(chosen, pairs, scores, d)
        plan = combine_cliques([pairs[i] for i in chosen], domain,
                               min(COMBINE_MAX_CELLS, self.max_cells))
        plan += [w for w in workload if len(w) == 3 and w not in plan]
        weights = [workload.get(m, 1.0) for m in plan]
        mcells = check_domains(plan, domain, names, self.max_cells)
        self.selected = [tuple(names[a] for a in m) for m in plan]
        # 3) the selected marginals, budget ~ w c^(2/3)
        with bar(self.progress, len(plan), "measure marginals") as pb:
            sel = measure(self.backend, counts, domain, plan, c23_fractions(mcells, f_marg, weights),
                          acc, key, names, pb)
        return one + sel

    # -- sample: post-processing ----------------------------------------------------
    def _targets(self, n: int):
        """The most detailed marginals (those inside no other), scaled to n records."""
        sets = [set(m.attrs) for m in self.marginals]
        top = [m for m, s in zip(self.marginals, sets) if not any(s < o for o in sets)]
        out = []
        for m in top:
            tot = m.values.sum()
            t = m.values * (n / tot) if tot > 0 else np.full(m.cells, n / m.cells)
            out.append((m.attrs, m.shape, t))
        return out

    def _init_records(self, n: int, key, call: int) -> list:
        xp, be = self.backend.xp, self.backend
        if self.public is not None:  # a public prior: resample its records to n
            n_pub = len(self.public[0])
            u = be.uniforms(key, n, 0, rng.PRIOR, call)
            idx = xp.minimum(xp.floor(u * n_pub).astype(xp.int64), n_pub - 1)
            return [xp.ascontiguousarray(be.asarray(c)[idx]) for c in self.public]
        one = {m.attrs[0]: m for m in self.marginals if len(m.attrs) == 1}
        counts = []
        for a, size in enumerate(self.domain):
            v = one[a].values if a in one else np.ones(size)
            v = v if v.sum() > 0 else np.ones(size)
            counts.append(apportion(np, v.astype(np.float64), float(n)).astype(np.int64))
        return be.init_records(counts, key, call)

    def sample(self, n: int | None = None) -> pd.DataFrame:
        if self.marginals is None:
            raise DPSynError("call fit(df, schema) before sample()")
        n = self._estimated_rows() if n is None else self.check_sample(n)
        return self._generate(n, self._targets(n), self._reserve_calls(1))

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
        from .distributed.sampling import sample_to
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
        decoded; the RNG streams are keyed by the seed and `call`."""
        key = rng.split_key(self.seed)
        t0 = time.perf_counter()
        st = plan_structure([t[0] for t in targets], len(self.domain), self.append_attributes,
                            self.duplicate_scope)
        cols = self._init_records(n, key, call)
        with bar(self.progress, self.gum.limit, "GUM iterations") as pb:
            res = run_gum(self.backend, [project(*targets[i], st.attrs[i]) for i in st.gum_targets],
                          cols, key, call, self.gum, pb, [st.groups[i] for i in st.gum_targets])
        for x, i in st.appended:
            append_attribute(self.backend, res.cols, x, *targets[i], key, call)
        self.backend.synchronize()
        t1 = time.perf_counter()
        self.history = res.history
        self.gum_seconds = res.seconds
        self.structure = st
        codes = [self.backend.to_numpy(c) for c in res.cols]
        for a, r in self.recodes.items():
            codes[a] = undo(codes[a], r, key, call)
        be = self.backend
        out = decode(codes, self.schema, self.seed, call, self.numeric_decode,
                     lambda j, m: be.to_numpy(be.uniforms(key, m, j, rng.DECODE, call)))
        self.timings.update(gum=t1 - t0, decode=time.perf_counter() - t1)
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

    def _check_memory(self, n: int, domain) -> None:
        """Refuse a sample that cannot fit, before allocating it."""
        need = n * (sum(code_dtype(d).itemsize for d in domain) + WORK_BYTES_PER_ROW)
        free = self.backend.free_memory()
        if free is not None and need > free:
            raise DataError(f"sample({n:,}) needs about {need / 2**30:.1f} GiB of "
                            f"{self.backend.name.upper()} memory, only {free / 2**30:.1f} GiB "
                            "is free; ask for fewer rows")

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
        return rep


def _row_count(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_ROWS:
        raise DataError(f"number of rows must be an integer in [1, {MAX_ROWS}], got {n!r}")
    return int(n)


def _is_distributed_input(df) -> bool:
    """A path or a dask collection: read through Dask (by module name, so pandas input
    never imports dask)."""
    return isinstance(df, (str, os.PathLike)) or \
        type(df).__module__.split(".")[0] in ("dask", "dask_expr", "dask_cudf")


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


