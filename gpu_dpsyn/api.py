"""The public API: Synthesizer(epsilon, delta).fit(df, schema).sample(n)."""
from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from . import rng
from .backend import get_backend
from .consistency import make_consistent
from .encoding import decode, encode
from .errors import DataError, DPSynError
from .gum import GUMConfig, apportion, run_gum
from .marginals import DEFAULT_MAX_CELLS, check_domains, dpsyn_plan, measure
from .privacy import Accountant
from .progress import bar
from .schema import load_schema

METHODS = ("dpsyn",)
MAX_ROWS = 2 ** 31 - 1


class Synthesizer:
    """Differentially private synthetic data by noisy marginals + consistency + GUM.

    fit() is the only step that reads the private data, and it spends the whole
    (epsilon, delta) budget; sample() is post-processing and may be called freely.
    """

    def __init__(self, epsilon: float, delta: float, *, method: str = "dpsyn",
                 iterations: int = 50, seed: int | None = None, backend: str = "auto",
                 sensitivity: int | None = None, mechanism: str = "auto",
                 max_cells: int = DEFAULT_MAX_CELLS, consistency_rounds: int = 500,
                 alpha: float = 1.0, alpha_decay: float = 0.84, alpha_step: int = 20,
                 update_mix: str = "S5", numeric_decode: str = "uniform",
                 progress: bool = True):
        if method not in METHODS:
            raise DPSynError(f"unknown method {method!r}; choose one of {METHODS}")
        if numeric_decode not in ("uniform", "midpoint"):
            raise DPSynError("numeric_decode must be 'uniform' or 'midpoint'")
        self.epsilon, self.delta = epsilon, delta
        self.method = method
        self.sensitivity = sensitivity
        Accountant(epsilon, delta, sensitivity or 1)  # validate parameters now, not after I/O
        self.mechanism = mechanism
        self.gum = GUMConfig(iterations, alpha, alpha_decay, alpha_step, update_mix)
        self.seed = rng.make_seed(seed)
        self.backend = get_backend(backend)
        self.max_cells = max_cells
        self.consistency_rounds = consistency_rounds
        self.numeric_decode = numeric_decode
        self.progress = progress
        self.accountant: Accountant | None = None
        self.marginals = None
        self.timings: dict = {}
        self._calls = 0

    # -- fit: the only access to private data ------------------------------------------
    def fit(self, df: pd.DataFrame, schema) -> "Synthesizer":
        if self.accountant is not None:
            raise DPSynError("this Synthesizer was already fitted; its budget is spent. "
                             "Create a new one to fit other data")
        t0 = time.perf_counter()
        self.schema = load_schema(schema)
        cols = encode(df, self.schema)
        self.dtypes = {c: df[c].dtype for c in df.columns}
        names = [c.name for c in self.schema.synth_columns]
        domain = self.schema.domain
        sens = self.sensitivity or self.schema.max_records_per_individual or 1
        acc = Accountant(self.epsilon, self.delta, sens)
        plan = dpsyn_plan(len(domain))
        cells = check_domains(plan, domain, names, self.max_cells)
        fractions = [1.0 / len(plan)] * len(plan)
        acc.choose_mechanism(fractions, cells, self.mechanism)
        self.accountant = acc  # from here on the budget counts as spent
        dev = [self.backend.asarray(c) for c in cols]
        t1 = time.perf_counter()
        with bar(self.progress, len(plan), "measure marginals") as pb:
            self.marginals = measure(self.backend, dev, domain, plan, fractions, acc,
                                     rng.split_key(self.seed), names, pb)
        t2 = time.perf_counter()
        total = make_consistent(self.marginals, max_rounds=self.consistency_rounds)
        self.n_estimate = max(1, int(round(total)))
        t3 = time.perf_counter()
        self.timings.update(encode=t1 - t0, measure=t2 - t1, consistency=t3 - t2)
        self.names, self.domain = names, domain
        return self

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

    def _init_counts(self, n: int) -> list:
        xp = np
        one = {m.attrs[0]: m for m in self.marginals if len(m.attrs) == 1}
        counts = []
        for a, size in enumerate(self.domain):
            v = one[a].values if a in one else np.ones(size)
            v = v if v.sum() > 0 else np.ones(size)
            counts.append(apportion(xp, v.astype(np.float64), float(n)).astype(np.int64))
        return counts

    def sample(self, n: int | None = None) -> pd.DataFrame:
        if self.marginals is None:
            raise DPSynError("call fit(df, schema) before sample()")
        n = self.n_estimate if n is None else n
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_ROWS:
            raise DataError(f"number of rows must be an integer in [1, {MAX_ROWS}], got {n!r}")
        n = int(n)
        call = self._calls
        self._calls += 1
        key = rng.split_key(self.seed)
        t0 = time.perf_counter()
        with bar(self.progress, self.gum.iterations, "GUM iterations") as pb:
            res = run_gum(self.backend, self._targets(n), self._init_counts(n), key, call,
                          self.gum, pb)
        self.backend.synchronize()
        t1 = time.perf_counter()
        self.history = res.history
        codes = [self.backend.to_numpy(c) for c in res.cols]
        out = decode(codes, self.schema, self.dtypes, self.seed, call, self.numeric_decode)
        self.timings.update(gum=t1 - t0, decode=time.perf_counter() - t1)
        return out

    # -- reporting --------------------------------------------------------------------
    @property
    def ledger(self) -> list:
        return [] if self.accountant is None else list(self.accountant.ledger)

    def privacy_report(self) -> dict:
        if self.accountant is None:
            raise DPSynError("nothing was measured yet: call fit() first")
        return self.accountant.summary()
