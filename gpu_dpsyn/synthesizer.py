"""The public API: Synthesizer(epsilon, delta).fit(df, schema).sample(n)."""
from __future__ import annotations

import dataclasses
import threading
import warnings


import pandas as pd

from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.config import Settings
from gpu_dpsyn.core import rng
from gpu_dpsyn.core.checks import integer
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.distributed.cluster import checked_client, current_client
from gpu_dpsyn.errors import DPSynError, LargeDeltaWarning
from gpu_dpsyn.generate.sample import check_memory, estimated_rows, generate, row_count
from gpu_dpsyn.measure import fit as measuring
from gpu_dpsyn.model import FittedModel
from gpu_dpsyn.privacy import Accountant
from gpu_dpsyn.privacy.report import privacy_report

_CALLS = threading.Lock()  # Synthesizer._reserve_calls: one reader and writer at once

# a delta past it draws a warning: a guarantee that may fail that often protects little
LARGE_DELTA = 1e-4


class Synthesizer:
    """Differentially private synthetic data by noisy marginals + consistency + GUM.

    fit() is the only step that reads the private data, and it spends the whole
    (epsilon, delta) budget; sample() is post-processing and may be called freely.

    Settings (keyword arguments, gpu_dpsyn.config.Settings; docs/method.md explains each):
    method="privsyn" (default) selects marginals privately by InDif and measures
    1-way + selected (<= 3-way) marginals; method="dpsyn" measures every 1-way and
    2-way marginal with equal shares.  workload={("a", "b"): w, ...} makes column
    sets count w times more: always measured, with w times the weight in the split.
    denoise=True (default) smooths each multi-way marginal along its binned numbers and
    dates where that lowers its estimated error, and takes its noisy cells to their
    posterior means under a prior estimated from them, before consistency
    (post-processing).
    polish=True (default) ends GUM (and the Gibbs sweep) with integer moves of each
    column's values that bring the records' marginals closer to their targets.
    on_invalid="repair" (default): values the schema does not allow are repaired by a
    public row-local rule (gpu_dpsyn.data.repair) so that no refusal depends on one
    record; "error" refuses such a table instead, which is not private.
    Numeric columns with `"bins": {"private_quantiles": K}` get DP quantile edges first,
    bought with quantile_share of the budget (default 5%).

    fit(df, schema, public=pub) starts GUM from a public table of the same schema and, with
    selection="auto" (or "public"), chooses the marginals from it at no cost;
    selection="private" keeps the noisy private InDif.  prior_tolerance=k: GUM leaves a cell
    whose count is within k noise standard deviations of its target as it is.
    append_attributes="auto" appends only when GUM starts from independent draws.
    group_by=["state"] or levels [["state"], ["puma", "year"]]: every group gets its own
    noisy count and marginals, each level's records the prior of the next.

    client=dask.distributed.Client(...) scales out: fit() then reads a dask DataFrame or
    a path (file, directory or glob) on the workers, and sample_to(path, n) writes
    Parquet parts, one batch per task (gpu_dpsyn.distributed).  Without client=, the
    process's current Dask client is used when there is one.

    After fit(): `model` (model.FittedModel: the noisy marginals and everything sampling
    needs), `accountant` and `fit_timings`; after each sample(): `last_run`
    (generate.records.SampleRun: GUM's curve and step times, for benchmarks only).
    """

    def __init__(self, epsilon: float, delta: float, *, client=None, **settings):
        self.settings = Settings.from_options(epsilon, delta, **settings)
        if self.settings.delta > LARGE_DELTA:
            warnings.warn(f"delta={self.settings.delta:g}: the guarantee may fail outright "
                          f"for an individual with probability up to {self.settings.delta:g}; "
                          "choose delta well below 1/n for n individuals (typically 1e-9 to "
                          "1e-6)", LargeDeltaWarning, stacklevel=2)
        # post-processing (GUM, decoding) randomness; the noise has its own key
        self.seed = rng.make_seed(self.settings.seed)
        self.backend = get_backend(self.settings.backend)
        self.client = checked_client(client)
        self.accountant = None
        self.model = None
        self.fit_timings: dict = {}  # seconds per stage: NOT for release (they grow with n)
        self.last_run = None
        self._calls = 0
        self._spending = None  # the model while fit() builds it (its privacy report)
        self._room = 0  # rows whose memory check_sample(n, schema) found before the fit

    def __repr__(self) -> str:
        s = self.settings
        state = f"fitted on {len(self.model.names)} columns" if self.model is not None else \
            "a fit that failed after spending budget" if self.ledger else "unfitted"
        return (f"Synthesizer(epsilon={s.epsilon!r}, delta={s.delta!r}, method={s.method!r}, "
                f"backend={self.backend.name!r}; {state})")

    # -- fit: the only access to private data ------------------------------------------
    def fit(self, df, schema, public: pd.DataFrame | None = None) -> "Synthesizer":
        """Measure df (private) under the schema (public).  df: a pandas (or cuDF)
        DataFrame; with client=, also a dask DataFrame or the path of a table, a directory
        of tables or a glob, encoded and counted on the workers.  `public`: a public table
        of the same schema whose records seed GUM instead of independent 1-way draws."""
        if self.accountant is not None and self.accountant.ledger:
            raise DPSynError("this Synthesizer was already fitted; its budget is spent. "
                             "Create a new one to fit other data")
        if public is not None and public is df:
            raise DPSynError("public= is the private table itself: a public table is used "
                             "without spending budget, so it must hold no private record")
        client = checked_client(self.client)  # (an attribute, which the CLI sets)
        if client is None and measuring.is_distributed_input(df):
            client = current_client()  # a Dask user's current client, as Dask does
        self.model, self.accountant, self.fit_timings = measuring.fit(
            self.settings, self.backend, client, df, schema, public, self.seed,
            self.settings.seed is not None, hold=self._hold)
        self._calls = self.model.fit_calls
        return self

    def _hold(self, accountant, model) -> None:
        # a fit that fails after a charge is still spent, and its report still made
        self.accountant, self._spending = accountant, model

    def check_plan(self, schema) -> tuple:
        """(workload as column indices, each level's group columns) for this schema: the
        checks of fit() that need no data, callable before the table is read."""
        return measuring.check_plan(self.settings, schema)

    def check_sample(self, n, schema=None, **message) -> int:
        """sample(n)'s refusals.  Given the schema, callable before fit() spends the budget:
        the schema's domain bounds the fitted one (filtering only merges values), and
        sample(m) for m <= n then checks no memory again: free memory after the fit is
        less what the private table takes, so whether a spent run refused would tell of
        it.  message: check_memory's `what` and `instead`."""
        if schema is None and self.model is None:
            raise DPSynError("check_sample(n) before fit() needs the schema")
        n = row_count(n)
        domain = self.model.domain if schema is None else load_schema(schema).domain
        check_memory(self.backend, n, domain, bool(self.settings.group_by), **message)
        if schema is not None:
            self._room = max(self._room, n)
        return n

    def _check_release(self, n) -> int:
        """sample(n)'s refusals: memory only past what check_sample(n, schema) cleared
        before the fit."""
        return row_count(n) if row_count(n) <= self._room else self.check_sample(n)

    # -- sample: post-processing ----------------------------------------------------
    def sample(self, n: int | None = None) -> pd.DataFrame:
        """n synthetic rows (default: the DP estimate of the row count)."""
        m = self._fitted("sample()")
        n = estimated_rows(m, self._check_release) if n is None else self._check_release(n)
        # every level's targets at n, level l's records with call + l
        out, self.last_run = generate(self.backend, m, n, None,
                                      self._reserve_calls(len(m.levels)))
        return out

    def sample_to(self, path, n: int | None = None, *, batch_rows: int | None = None) -> dict:
        """Write n synthetic rows (default: the DP estimate) as Parquet parts under the
        directory `path`: independent batches, one Dask task each on the client's workers
        (in this process without a client), every batch fitted to its exact integer share
        of the targets.  batch_rows: rows per batch (default: from the workers' memory
        limits and thread count; give it for output independent of the cluster).
        Returns {"path", "rows", "batches", "batch_rows", "parts", "gum_tvd" (each batch's
        final mean TVD to its targets), "gum_history" (the first batch's GUM curve)}."""
        m = self._fitted("sample_to()")
        if m.grouped:  # its batches would each need every level
            raise DPSynError("a group_by fit samples in memory: use sample(n)")
        from gpu_dpsyn.distributed.sampling import sample_to
        n = estimated_rows(m, row_count) if n is None else row_count(n)
        client = checked_client(self.client) or current_client()
        if client is None and batch_rows is not None:  # batches one by one here: each as
            b = min(n, integer("batch_rows", batch_rows, 1))  # sample(b), checked alike
            if b > self._room:
                self.check_sample(b, what=f"a batch of {b:,} rows",
                                  instead="give a smaller batch_rows")
        return sample_to(m, client, self._reserve_calls, path, n, batch_rows)

    def _fitted(self, what: str):
        if self.model is None:
            raise DPSynError(f"call fit(df, schema) before {what}")
        return self.model

    def _reserve_calls(self, k: int) -> int:
        """The first of k fresh values of the post-processing RNG's call word: sample()
        takes one, sample_to() one per batch, so no two draws of a seed share a stream,
        from two threads either (one lock for all: a Synthesizer stays picklable)."""
        with _CALLS:
            call = self._calls
            if call + k > 1 << 32:  # a 32-bit counter word
                raise DPSynError("this Synthesizer has drawn 2^32 samples or batches; "
                                 "fit anew")
            self._calls = call + k
        return call

    # -- keeping a fitted model -------------------------------------------------------
    def save(self, path):
        """Write the fitted model (noisy marginals and public inputs, no private record),
        the ledger and the RNG's next call to `path` (saving.py); returns the path.
        Sampling a loaded model later spends no budget."""
        from gpu_dpsyn import saving
        return saving.save(path, self._fitted("save()"), self.accountant, self._calls)

    @classmethod
    def load(cls, path, *, backend: str | None = None, client=None) -> "Synthesizer":
        """A fitted Synthesizer from a file save() wrote (only files you trust: it is a
        pickle); backend: where to sample (default: the one it was fitted with; every
        backend writes the same rows for a seed)."""
        from gpu_dpsyn import saving
        state = saving.load(path, {"model": FittedModel, "accountant": Accountant})
        model = state["model"]
        if backend is not None:  # where to sample, in this process and on Dask workers
            model = dataclasses.replace(model, settings=dataclasses.replace(
                model.settings, backend=backend))
        syn = cls.__new__(cls)
        syn.settings = model.settings
        syn.seed, syn.client, syn.model = model.seed, checked_client(client), model
        syn.backend = get_backend(model.settings.backend)
        syn.accountant, syn.fit_timings, syn.last_run = state["accountant"], {}, None
        syn._calls, syn._spending, syn._room = state["next_call"], None, 0
        return syn

    # -- reporting --------------------------------------------------------------------
    @property
    def ledger(self) -> list:
        return [] if self.accountant is None else list(self.accountant.ledger)

    def privacy_report(self) -> dict:
        if self.accountant is None:
            raise DPSynError("nothing was measured yet: call fit() first")
        return privacy_report(self.accountant, self.model or self._spending)
