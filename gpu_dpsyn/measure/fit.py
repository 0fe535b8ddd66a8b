"""fit(): the one pass over the private table.  Every check that can fail runs first;
then the table is encoded (straight onto the device), bounded to the declared records per
individual, and handed as a counts source to the method (dpsyn.py, privsyn.py), which
charges the accountant before each measurement.  What comes out is a FittedModel of
noisy, post-processed values; the noise key never leaves this module's call."""
from __future__ import annotations

import hashlib
import math
import os
import time
import warnings
from dataclasses import dataclass

import numpy as np

from gpu_dpsyn.core.checks import column_labels
from gpu_dpsyn.core.grouping import resolve_levels
from gpu_dpsyn.core.progress import step
from gpu_dpsyn.core.types import Level, check_domains
from gpu_dpsyn.data.dtypes import MAX_ROWS
from gpu_dpsyn.data import parquet_types
from gpu_dpsyn.data.encoding import check_columns, check_frame, encode
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.schema import Schema, load_schema, warn_drafted
from gpu_dpsyn.data.values import BLANK_HEADER, id_name, person_id_name
from gpu_dpsyn.errors import (DataError, DPSynError, ParameterError, PrivacyParameterError,
                              RowCountWarning)
from gpu_dpsyn.estimate.consistency import total_standard_error
from gpu_dpsyn.estimate.smoothing import ordered_lengths
from gpu_dpsyn.estimate.targets import estimate, pooled_total
from gpu_dpsyn.measure import dpsyn, privsyn, quantiles, rounds
from gpu_dpsyn.measure.marginals import LocalCounts
from gpu_dpsyn.measure.noisy import warn_noisy
from gpu_dpsyn.model import FittedModel
from gpu_dpsyn.privacy import Accountant
from gpu_dpsyn.privacy.bounding import kept_rows
from gpu_dpsyn.privacy.keys import noise_key
from gpu_dpsyn.selection.greedy import dpsyn_plan


@dataclass
class FitState:
    """A fit in progress: what the method's steps share.  `key` is the noise key and
    `counts` the private table's counts source: both stay inside measure/."""
    settings: object
    backend: object
    accountant: Accountant
    key: bytes
    counts: object
    model: FittedModel
    workload: dict  # column indices -> weight
    public_raw: list | None = None  # the public table's codes as encoded, until bins/merges
    calls: int = 0  # post-processing RNG calls the rounds' records S took
    pooling_test: bool = True  # the rounds weigh triples against measuring again (tried
    # without it: bench/experiments/rounds_forgone)

    def reserve_calls(self, k: int) -> int:
        call, self.calls = self.calls, self.calls + k
        return call

    def estimate(self, marginals, measured_cells) -> float:
        s = self.settings
        with step(s.progress, "estimate: denoise, make the marginals consistent"):
            return estimate(marginals, measured_cells, s.denoise, s.consistency_rounds,
                            ordered_lengths(self.model.schema.synth_columns,
                                            self.model.recodes))

    def choose_bins(self, fractions) -> None:
        """Buy the private-quantile columns' edges (charged first): the schema and domain
        from here on carry them, and the counts source recodes grid codes to bin codes."""
        m = self.model
        if fractions:
            m.bins = quantiles.choose_bins(self.backend, self.counts, m.schema, fractions,
                                           self.accountant, self.key)
            m.schema = m.bins.schema
            for a, recode in m.bins.recodes().items():
                self.counts.recode(a, recode)
        m.domain = m.schema.domain

    def public_codes(self) -> list:
        """The public table's codes in the fitted domain (chosen bins, merged values)."""
        m, pub = self.model, self.public_raw
        pub = m.bins.remap(np, pub) if m.bins is not None else pub
        return [m.recodes[a].apply(np, c) if a in m.recodes else c for a, c in enumerate(pub)]


def check_plan(settings, schema) -> tuple:
    """(workload as column indices, each level's group columns) for this schema: the
    checks of fit() that need no data, callable before the table is read."""
    schema = load_schema(schema)
    names = [c.name for c in schema.synth_columns]
    workload = _resolve_workload(settings.workload, names, schema)
    groups = resolve_levels(settings.group_by, schema, workload, settings.max_cells) \
        if settings.group_by else [()]
    if groups == [()]:  # a column after another is its gap: measured with its start
        for c in schema.synth_columns:  # (within max_cells), whatever the scores
            if c.kind == "datetime" and c.time.after is not None:
                pair = tuple(sorted((names.index(c.time.after.column), names.index(c.name))))
                if math.prod(schema.domain[a] for a in pair) <= settings.max_cells:
                    workload.setdefault(pair, 1.0)
    if groups == [()]:  # the 1-ways, the sets named, DPSyn's pairs: each measured
        d = len(names)    # (grouped: resolve_levels checked its sets)
        sets = dpsyn_plan(d) if settings.method == "dpsyn" else [(a,) for a in range(d)]
        check_domains(sets + list(workload), schema.domain, names, settings.max_cells)
    return workload, groups


def _warn_other_budget(settings, schema) -> None:
    """A NIST parameters file names the runs' (epsilon, delta): a fit at none of them
    says so (its epsilon and delta come from the caller, not the file)."""
    eps, delta = settings.epsilon, settings.delta
    if not schema.budgets or any(e == eps and d in (None, delta) for e, d in schema.budgets):
        return
    named = ", ".join(f"({e:g}, {'-' if d is None else f'{d:g}'})" for e, d in schema.budgets)
    warnings.warn(f"the schema's runs name (epsilon, delta) {named}; this fit uses "
                  f"({eps:g}, {delta:g}), which none of them names", UserWarning,
                  stacklevel=4)


def _warn_ignored_id(schema) -> None:
    """An ignored column named like an identifier where no column names the individual:
    each record is then taken for one, and max_records_per_individual is not enforced;
    so too a synthesized one named so (a code, country_code, is not), which a draft
    without --id makes numbers or values."""
    if schema.unit_id is not None and not BLANK_HEADER.fullmatch(schema.unit_id):
        return
    if schema.unit_id is not None:  # the only id: drafted from a CSV saved with its index
        warnings.warn(f"the individual id {schema.unit_id!r} is a saved row index (a blank "
                      "header over the row numbers): it names records, not people, so each "
                      "record is taken for one individual", UserWarning, stacklevel=4)
    named = [c for c in schema.ignored if id_name(c)]
    if named:
        warnings.warn(f"ignored column {named[0]!r} is named like an identifier, and no "
                      "column names the individual: each record is taken for one (a weaker "
                      "unit where a person has several); keep it as an id column if it "
                      "names them", UserWarning, stacklevel=4)
    data = [c.name for c in schema.columns if c.kind not in ("derived", "id") and
            person_id_name(c.name)]
    if data:
        warnings.warn(f"column {data[0]!r} is named like an identifier but is synthesized as "
                      "data, and no column names the individual: each record is taken for "
                      "one (a weaker unit where a person has several); if it names them, "
                      "make it \"type\": \"id\" with \"individual_id\"", UserWarning,
                      stacklevel=4)


def fit(settings, backend, client, df, schema, public, seed: int, seeded: bool,
        hold=None, key_context=None, pooling_test: bool = True):
    """Measure df (private) under the schema (public); returns (FittedModel, Accountant,
    timings).  See Synthesizer.fit for the inputs.  hold(accountant, model) is called
    before the first charge: whoever holds them sees the spend, and can report it, even if
    a later step fails.
    key_context(context) -> context: what a seeded noise key is derived from (a paired
    experiment drops a setting so that two fits share their noise); never a key itself.
    pooling_test=False: the adaptive rounds without their pooling test (an experiment's
    variant, not a setting)."""
    t0 = time.perf_counter()
    if settings.selection == "public" and public is None:
        raise ParameterError("selection='public' needs a public table: fit(df, schema, "
                             "public=...)")
    if settings.prior_tolerance and public is None:  # (it would hold every GUM run back)
        raise ParameterError("prior_tolerance > 0 needs a public table: fit(df, schema, "
                             "public=...)")
    if isinstance(schema, Schema):  # a dict or a file warned as it was read
        warn_drafted(schema.drafted, 4)  # (the caller of Synthesizer.fit)
    schema = load_schema(schema)
    _warn_other_budget(settings, schema)
    _warn_ignored_id(schema)
    names = [c.name for c in schema.synth_columns]
    workload, groups = check_plan(settings, schema)
    sens = _sensitivity(settings.sensitivity, schema)
    grid = quantiles.grid_schema(schema)  # private-quantile columns on their grid
    if rounds.planned(settings, schema.domain, groups):  # S's memory, before the table
        rounds.check_memory(backend, list(schema.domain))  # is read
    counts = None
    if settings.group_by and is_distributed_input(df):
        raise DPSynError("group_by runs in memory: fit a pandas DataFrame, without Dask")
    if is_distributed_input(df):
        from gpu_dpsyn.distributed.counting import dask_counts
        if hasattr(df, "dtypes"):  # a Dask frame's: before any charge (a glob: its files')
            parquet_types.check_frame(df, grid or schema)
        # every partition is read, checked and encoded before the first charge
        counts = dask_counts(client, df, grid or schema, settings.backend,
                             settings.on_invalid)
    else:
        check_frame(df, "the table")
        column_labels(df, "the table")
        parquet_types.check_frame(df, grid or schema)  # by its dtypes (labels one each)
        if len(df) > MAX_ROWS:  # InDif's exact integer sums assume fewer (2 n^2 < 2^63)
            raise DataError(f"the table has {len(df):,} rows; at most {MAX_ROWS:,} fit in "
                            "one Synthesizer")
        repairing = settings.on_invalid == "repair"
        if repairing:  # no refusal may hinge on one record's values (data/repair.py)
            check_columns(df, schema, allow_empty=True)
            df = repair(df, grid or schema)
        dev = encode(df, grid or schema, backend.xp, allow_empty=repairing,  # onto the
                     derived_made=repairing)                                 # device
    backend.prepare()  # kernels compiled before the first charge, not after
    pub = None
    if public is not None:
        check_frame(public, "the public table")
        column_labels(public, "the public table")
        try:
            check_columns(public, schema)
            pub = encode(public, grid or schema)
        except DataError as e:
            raise DataError(f"public table: {e}") from None
    s = settings
    context = dict(epsilon=s.epsilon, delta=s.delta,
                   method=s.method, sensitivity=sens, conversion=s.conversion,
                   mechanism=s.mechanism, schema=schema.to_dict(),
                   workload=list(s.workload), group_by=list(s.group_by or ()),
                   selection=s.selection,
                   # its records choose and start what is measured
                   public=None if pub is None else _digest(pub),
                   adaptive_rounds=s.adaptive_rounds,
                   # what the rounds' records and the plan depend on (the rounds fix
                   # GUM's iterations themselves)
                   gum=[s.gum.alpha, s.gum.alpha_decay, s.gum.alpha_step, s.gum.mix],
                   duplicate_scope=s.duplicate_scope,
                   append_attributes=s.append_attributes,
                   neighbour_shuffle=s.neighbour_shuffle,
                   gibbs_sweep=s.gibbs_sweep, polish=s.polish,
                   # the rounds' records are fitted to what it estimates
                   denoise=s.denoise, prior_tolerance=s.prior_tolerance,
                   consistency_rounds=s.consistency_rounds,
                   filter_low_counts=s.filter_low_counts, max_cells=s.max_cells,
                   quantile_share=s.quantile_share if
                   quantiles.private_columns(schema) else None)
    key = noise_key(seed if seeded else None,
                    **(context if key_context is None else key_context(context)))
    unit = schema.unit_id
    if unit is not None and counts is None:  # enforce the bound the noise is calibrated
        keep = kept_rows(df, unit, sens, key)  # to (dask_counts refuses ids)
        if keep is not None:
            idx = backend.asarray(keep)
            dev = [c[idx] for c in dev]
    if counts is None:
        counts = LocalCounts(backend, dev)
    model = FittedModel(settings, seed, seeded, schema, names,
                        public_selection=pub is not None and s.selection != "private")
    state = FitState(settings, backend, Accountant(s.epsilon, s.delta, sens, s.conversion),
                     key, counts, model, workload, pub, pooling_test=pooling_test)
    if hold is not None:  # with the model as built so far: its report can be made
        hold(state.accountant, model)
    t1 = time.perf_counter()
    if s.method == "dpsyn":
        marginals = dpsyn.fit(state)
        model.levels = [Level((), marginals, measured_cells=[m.cells for m in marginals])]
    else:
        model.levels = privsyn.fit(state, groups)
    t2 = time.perf_counter()
    for lv in model.levels:
        # from noise levels and domains alone: a warning may show it
        lv.standard_error = total_standard_error(lv.marginals)
        lv.total = state.estimate(lv.marginals, lv.measured_cells)
    total, model.n_standard_error = pooled_total(model.levels)
    model.n_estimate = clamped_rows(total, schema)
    warn_noisy(model)
    if pub is not None and model.public is None:
        model.public = state.public_codes()
    model.fit_calls = state.calls
    timings = dict(encode=t1 - t0, measure=t2 - t1, consistency=time.perf_counter() - t2)
    return model, state.accountant, timings


def clamped_rows(total: float, schema) -> int:
    """The noisy row count as a release size: clamped to [1, the schema's public maximum
    ("max_rows", else DEFAULT_MAX_ROWS), with a RowCountWarning when it was outside
    (post-processing of a noisy value: a tiny epsilon or a huge sensitivity can make it
    10^8 or negative)."""
    cap = schema.row_cap
    where = "the schema's \"max_rows\"" if schema.max_rows else \
        "the default maximum; set \"max_rows\" in the schema"
    if not total < cap + 0.5:  # NaN included
        warnings.warn(f"the noisy row count ({total:,.0f}) is above the public maximum of "
                      f"{cap:,} rows ({where}): the release has {cap:,} rows unless you "
                      "choose the size with sample(n) (--rows N)", RowCountWarning,
                      stacklevel=4)
        return cap
    if total < 0.5:
        warnings.warn(f"the noisy row count ({total:,.0f}) is below 1: the release has 1 row "
                      "unless you choose the size with sample(n) (--rows N)",
                      RowCountWarning, stacklevel=4)
        return 1
    return int(round(total))


def is_distributed_input(df) -> bool:
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


def _sensitivity(given, schema) -> int:
    """Records per individual: an explicit value may not undercut the schema's."""
    declared = schema.max_records_per_individual
    if given is None and declared is None and schema.unit_id is not None:
        warnings.warn(f"the schema names the individual id {schema.unit_id!r} but no "
                      "max_records_per_individual: 1 record of each individual is kept (at "
                      "random) and the rest dropped; set that public bound in the schema "
                      "(or --sensitivity N)", UserWarning, stacklevel=5)
    if given is None:
        return declared or 1
    if declared and given < declared:
        raise PrivacyParameterError(
            f"sensitivity={given} is below the schema's max_records_per_individual "
            f"({declared} records): it would under-count what one individual contributes")
    return given


def _resolve_workload(workload, names, schema) -> dict:
    out = {}
    kept = {c.name: f"the {c.kind} column" for c in schema.columns} | dict.fromkeys(
        schema.ignored, "ignored")  # in the schema, not synthesized
    for cols, w in workload:
        unknown = [c for c in cols if c not in names]
        known = next((c for c in unknown if c in kept), None)
        if known is not None:
            raise DataError(f"workload names {known!r}: it is {kept[known]}, not "
                            f"synthesized; columns are {names}")
        if unknown:
            raise DataError(f"workload names unknown column(s) {unknown}; columns are {names}")
        out[tuple(sorted(names.index(c) for c in cols))] = w
    return out
