"""Settings: every choice a Synthesizer is made with, frozen and validated in one place.

Settings hold what the user asked for and nothing that fit() learns (that is the
FittedModel, model.py) or that one sample() leaves behind (generate.sample.SampleRun), as
scikit-learn keeps parameters apart from fitted attributes.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field, fields

import numpy as np

from gpu_dpsyn.backends import BACKENDS
from gpu_dpsyn.core import rng
from gpu_dpsyn.core.checks import flag, integer
from gpu_dpsyn.core.grouping import parse_group_by
from gpu_dpsyn.core.types import DEFAULT_MAX_CELLS
from gpu_dpsyn.errors import BackendError, DPSynError, ParameterError, PrivacyParameterError
from gpu_dpsyn.generate.gum import DUPLICATE_SCOPES, GUMConfig
from gpu_dpsyn.privacy import Accountant
from gpu_dpsyn.privacy.samplers import MAX_NOISE_CELLS
from gpu_dpsyn.selection.triples import ROUNDS

METHODS = ("privsyn", "dpsyn")
MECHANISMS = ("auto", "gaussian", "laplace")
SELECTIONS = ("auto", "public", "private")
# values the schema does not allow: the row-local rule (data/repair.py), or a refusal
# that depends on one record and so is not private
INVALID_RULES = ("repair", "error")
# beyond this the noise is below a thousandth of a count; near 1e21 the zCDP conversion
# overflows
MAX_EPSILON = 1e6
DEFAULT_QUANTILE_SHARE = 0.05  # of the whole budget, for all private-quantile columns


@dataclass(frozen=True)
class Settings:
    """The Synthesizer's settings (its keyword arguments; see Synthesizer's docstring)."""
    epsilon: float
    delta: float
    method: str = "privsyn"
    iterations: int | str = "auto"
    seed: int | None = None
    backend: str = "auto"
    sensitivity: int | None = None
    mechanism: str = "auto"
    conversion: str = "cks"
    workload: object = None
    max_cells: int = DEFAULT_MAX_CELLS
    consistency_rounds: int = 500
    alpha: float = 1.0
    alpha_decay: float = 0.7
    alpha_step: int = 10
    update_mix: str = "S5"
    filter_low_counts: bool = True
    append_attributes: bool | str = "auto"
    duplicate_scope: str = "neighbours"
    # "uniform": a random place inside the bin (shaped by the neighbouring bins' densities,
    # generate/decode.bin_shape; the name kept from when it was even), "midpoint": its centre
    numeric_decode: str = "uniform"
    quantile_share: float = DEFAULT_QUANTILE_SHARE
    selection: str = "auto"
    group_by: object = None
    prior_tolerance: float = 0.0
    adaptive_rounds: int = ROUNDS
    neighbour_shuffle: bool = True
    gibbs_sweep: bool = True
    polish: bool = True
    denoise: bool = True
    progress: bool = True
    on_invalid: str = "repair"
    gum: GUMConfig = field(init=False, repr=False, compare=False)

    @classmethod
    def from_options(cls, epsilon, delta, **options) -> "Settings":
        """Settings(epsilon, delta, **options), with a clear error (and a hint) for a
        misspelt option instead of Python's TypeError."""
        known = {f.name for f in fields(cls) if f.init}
        unknown = sorted(set(options) - known)
        if unknown:
            hint = difflib.get_close_matches(unknown[0], sorted(known), n=1)
            raise ParameterError(f"unknown setting {unknown[0]!r}"
                                 + (f"; did you mean {hint[0]!r}?" if hint else ""))
        return cls(epsilon, delta, **options)

    def __post_init__(self):
        def put(name, value):
            object.__setattr__(self, name, value)
        if self.method not in METHODS:
            raise DPSynError(f"unknown method {self.method!r}; choose one of {METHODS}")
        if self.numeric_decode not in ("uniform", "midpoint"):
            raise DPSynError("numeric_decode must be 'uniform' or 'midpoint'")
        if self.mechanism not in MECHANISMS:
            raise PrivacyParameterError(f"unknown mechanism {self.mechanism!r}; choose one of "
                                        f"{MECHANISMS}")
        if self.method == "privsyn" and self.mechanism == "laplace":
            raise DPSynError("method='privsyn' uses zCDP (Gaussian) accounting; "
                             "use method='dpsyn' for the Laplace mechanism")
        put("epsilon", _budget_number(self.epsilon))
        put("delta", _budget_number(self.delta))
        eps = self.epsilon
        if isinstance(eps, (int, float)) and not isinstance(eps, bool) and eps > MAX_EPSILON:
            shown = f"{eps:.3g}" if eps < 1e308 else "more than 1e308"
            raise PrivacyParameterError(f"epsilon must be at most {MAX_EPSILON:g}, got {shown} "
                                        "(that far above it the noise is nil anyway)")
        if self.sensitivity is not None:  # 0 must not quietly become the default; an int,
            # as the seeded key reads it as text (np.int64(2) was "2", another noise)
            put("sensitivity", integer("sensitivity (max records per individual)",
                                       self.sensitivity, 1, PrivacyParameterError))
        # validated now, not after the table is read
        Accountant(eps, self.delta, self.sensitivity or 1, self.conversion)
        put("workload", _check_workload_shape(self.workload))
        put("gum", GUMConfig(self.iterations, self.alpha, self.alpha_decay, self.alpha_step,
                             self.update_mix))
        if self.seed is not None:
            put("seed", rng.make_seed(self.seed))
        if self.backend not in BACKENDS:
            raise BackendError(f"unknown backend {self.backend!r}; choose one of {BACKENDS}")
        put("max_cells", integer("max_cells", self.max_cells, 1))
        if self.max_cells > MAX_NOISE_CELLS:  # one draw's elements share a stream
            raise ParameterError(f"max_cells must be at most 2^30, got {self.max_cells!r}")
        put("consistency_rounds", integer("consistency_rounds", self.consistency_rounds, 1))
        put("filter_low_counts", flag("filter_low_counts", self.filter_low_counts))
        # auto: only when GUM starts from independent draws; from a prior (a public table
        # or the level above) appending would redraw a column given one marginal and drop
        # what the prior holds between it and the rest (docs/method.md)
        if self.append_attributes != "auto":
            if not isinstance(self.append_attributes, (bool, np.bool_)):
                raise ParameterError("append_attributes must be True, False or 'auto', got "
                                     f"{self.append_attributes!r}")
            put("append_attributes", bool(self.append_attributes))
        if self.duplicate_scope not in DUPLICATE_SCOPES:
            raise DPSynError(f"duplicate_scope must be one of {DUPLICATE_SCOPES}")
        put("quantile_share", _share(self.quantile_share))
        if self.selection not in SELECTIONS:
            raise ParameterError(f"unknown selection {self.selection!r}; choose one of "
                                 f"{SELECTIONS}")
        if self.method == "dpsyn" and self.selection != "auto":
            raise ParameterError("selection chooses PrivSyn's marginals: method='dpsyn' "
                                 "measures every pair")
        # None or a tuple of levels: parsing it again gives it back (dataclasses.replace)
        put("group_by", tuple(parse_group_by(self.group_by)) or None)
        if self.group_by and self.method == "dpsyn":
            raise ParameterError("group_by needs method='privsyn'")
        tol = _real(self.prior_tolerance)
        if tol is None or not 0 <= tol < math.inf:
            raise ParameterError(f"prior_tolerance must be a number >= 0, got "
                                 f"{self.prior_tolerance!r}")
        put("prior_tolerance", tol)
        put("adaptive_rounds", integer("adaptive_rounds", self.adaptive_rounds, 0))
        if self.on_invalid not in INVALID_RULES:
            raise ParameterError(f"on_invalid must be one of {INVALID_RULES}, got "
                                 f"{self.on_invalid!r}")
        for name in ("neighbour_shuffle", "gibbs_sweep", "polish", "denoise", "progress"):
            put(name, flag(name, getattr(self, name)))


def _budget_number(v):
    """epsilon or delta as a Python float: NumPy scalars (np.float32 is no float subclass)
    and ints too, so 1 and 1.0 are one budget to the seeded noise key (which reads the
    parameters as text).  Anything else, and an int past the float range, is left for
    the checks to refuse by name."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer, np.floating)):
        return v
    try:
        return float(v)
    except OverflowError:
        return v


def _real(v) -> float | None:
    """A real number as a float, NumPy's scalars too (a weight from np.arange, a float32),
    as epsilon takes them; an int past float64 as an infinity (for the range checks to
    refuse by name, not an OverflowError); None for a boolean or anything else."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                             np.floating)):
        return None
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _share(share) -> float:
    """quantile_share: the budget fraction for all private-quantile columns together."""
    if _real(share) is None or not 0 < share < 1:
        raise ParameterError(f"quantile_share must be a number in (0, 1), got {share!r}")
    return float(share)


# a workload weight's range: a weight of 1e100 left every other set noise past 64 bits
WEIGHTS = (1e-3, 1e3)


def _check_workload_shape(workload) -> tuple:
    """((column names, weight), ...), validated for form; names are checked in fit()."""
    if workload is None:
        return ()
    if isinstance(workload, (str, bytes)) or not isinstance(workload, (dict, list, tuple)):
        raise DPSynError("workload must be a dict {columns: weight} or a list of (columns, "
                         f"weight) pairs, got {type(workload).__name__}")
    items = workload.items() if isinstance(workload, dict) else workload
    out = []
    for entry in items:
        try:
            cols, w = entry
        except (TypeError, ValueError):
            raise DPSynError(f"workload entries are (columns, weight), got {entry!r}") from None
        try:
            cols = (cols,) if isinstance(cols, str) else tuple(cols)
        except TypeError:  # a number, say
            cols = (cols,)
        if not all(isinstance(c, str) for c in cols):
            raise DPSynError(f"workload columns are a column name or a tuple of names, got "
                             f"{entry[0]!r}")
        if not 1 <= len(cols) <= 3 or len(set(cols)) != len(cols):
            raise DPSynError(f"workload column sets have 1 to 3 distinct columns, got {cols!r}")
        given, w = w, _real(w)
        if w is None or not w > 0:
            raise DPSynError(f"workload weight for {cols} must be a positive number, got "
                             f"{given!r}")
        if not WEIGHTS[0] <= w <= WEIGHTS[1]:
            raise DPSynError(f"workload weight for {cols} must be between {WEIGHTS[0]:g} and "
                             f"{WEIGHTS[1]:g} (its budget against the others' weight 1), "
                             f"got {float(w):g}")
        out.append((cols, w))
    return tuple(out)
