"""Privacy accounting: (epsilon, delta) -> zCDP budget, mechanism choice, ledger.

Every measurement of private data is charged here first.  A budget is split
into fractions of the whole; a fraction f buys rho_i = f * rho (Gaussian,
zCDP) or eps_i = f * eps (Laplace, pure DP, basic composition).  The mechanism
is chosen once, before any data is touched, from the planned measurements only
(as DPSyn's get_noise does), so the choice leaks nothing.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from fractions import Fraction

import numpy as np

from gpu_dpsyn.errors import BudgetExceededError, PrivacyParameterError
from gpu_dpsyn.privacy.samplers import DiscreteGaussian, DiscreteLaplace
from gpu_dpsyn.core.summing import left_sum

_TOL = 1e-9  # a plan's float budget shares may overshoot 1 by this much (rounding)
_ROUNDING = 1e-9  # rho is lowered by this relative amount to absorb float error


CONVERSIONS = ("cks", "bun-steinke")


def _bisect(below, lo: float, hi: float, steps: int = 200) -> tuple[float, float]:
    """(lo, hi) around the point where the monotone test below(x) turns False."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if below(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


def zcdp_delta(rho: float, epsilon: float) -> float:
    """Smallest delta such that rho-zCDP implies (epsilon, delta)-DP, by Canonne, Kamath
    and Steinke (2020, Prop. 12):
        delta = inf_{a > 1} exp((a-1)(a rho - eps)) / (a-1) * (1 - 1/a)^a.
    The log of the objective is convex in a with derivative (2a-1) rho - eps +
    log(1 - 1/a), so its minimum is found by bisection on the derivative."""
    if rho <= 0:
        return 0.0
    lo, hi = _bisect(lambda a: (2 * a - 1) * rho - epsilon + math.log1p(-1.0 / a) < 0,
                     1.0 + 1e-9, max((epsilon + 1.0) / (2.0 * rho), 1.0) + 2.0)
    a = (lo + hi) / 2
    log_delta = (a - 1) * (a * rho - epsilon) + a * math.log1p(-1.0 / a) - math.log(a - 1)
    return min(1.0, math.exp(log_delta))


def eps_delta_to_rho(epsilon: float, delta: float, conversion: str = "cks") -> float:
    """The largest rho whose rho-zCDP implies (epsilon, delta)-DP.

    "cks": the tight conversion of Canonne-Kamath-Steinke (bisection on zcdp_delta),
    27-47% more rho than "bun-steinke" at epsilon <= 1;
    "bun-steinke": rho = (sqrt(eps + L) - sqrt(L))^2, L = ln(1/delta) (2016, Prop. 1.3)."""
    check_epsilon_delta(epsilon, delta)
    if conversion == "bun-steinke":
        L = -math.log(delta)
        rho = (epsilon / (math.sqrt(epsilon + L) + math.sqrt(L))) ** 2  # no cancellation
    elif conversion == "cks":
        # zcdp_delta grows with rho: keep the largest rho that is safe
        rho = _bisect(lambda r: zcdp_delta(r, epsilon) <= delta, 0.0, epsilon + 1.0)[0]
    else:
        raise PrivacyParameterError(f"unknown conversion {conversion!r}; use one of {CONVERSIONS}")
    rho *= 1.0 - _ROUNDING  # what floating point may have overstated
    if not (math.isfinite(rho) and rho > 0):  # fail closed: NaN noise must never be drawn
        raise PrivacyParameterError(f"(epsilon={epsilon}, delta={delta}) gives no usable zCDP "
                                    f"budget (rho={rho}); use a larger delta or epsilon")
    return rho


def rho_to_epsilon(rho: float, delta: float, conversion: str = "cks") -> float:
    """The epsilon that rho-zCDP implies at this delta."""
    if conversion == "bun-steinke":
        return rho + 2.0 * math.sqrt(rho * -math.log(delta))
    upper = rho + 2.0 * math.sqrt(rho * -math.log(delta))  # Bun-Steinke is an upper bound
    return _bisect(lambda e: zcdp_delta(rho, e) > delta, 0.0, upper)[1]


def gaussian_sigma(rho: float, sensitivity: float = 1.0) -> float:
    """Noise std for a rho-zCDP Gaussian mechanism with L2 sensitivity D: D / sqrt(2 rho)."""
    if rho <= 0:
        raise PrivacyParameterError(f"rho must be > 0, got {rho}")
    return sensitivity / math.sqrt(2.0 * rho)


def laplace_scale(epsilon: float, sensitivity: float = 1.0) -> float:
    """Laplace scale b = D / eps (variance 2 b^2) for an eps-DP count vector."""
    if epsilon <= 0:
        raise PrivacyParameterError(f"epsilon must be > 0, got {epsilon}")
    return sensitivity / epsilon


def check_epsilon_delta(epsilon, delta) -> None:
    for name, v in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise PrivacyParameterError(f"{name} must be a finite number, got {v!r}")
    if epsilon <= 0:
        raise PrivacyParameterError(f"epsilon must be > 0, got {epsilon}")
    if not 0 < delta < 1:
        raise PrivacyParameterError(f"delta must be in the open interval (0, 1), got {delta}")


@dataclass
class LedgerEntry:
    label: str
    columns: tuple
    cells: int
    mechanism: str  # "gaussian" (discrete) or "laplace" (discrete)
    fraction: float
    rho: float | None  # zCDP spent (gaussian)
    epsilon: float | None  # pure-DP epsilon spent (laplace)
    sigma: float  # standard deviation of the noise per cell, as drawn
    scale: float  # sigma for gaussian, the scale t/s for laplace, as drawn
    noise: DiscreteGaussian | DiscreteLaplace = field(repr=False, default=None)

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k != "noise"}
        d["columns"] = list(self.columns)
        d["noise"] = self.noise.describe()  # the exact rational parameter drawn with
        return d


MAX_SENSITIVITY = 2 ** 31 - 1  # records per individual: no table holds more (data/dtypes.py
# MAX_ROWS); 2^55 made noise values past 64 bits, at random, after the first charges
# the noise of the whole budget on one count: any more and a count of any table is lost in
# it, and a measurement's share of it (>= 1e-16 of the budget, workload weights bounded)
# would draw noise near 2^63, which fails closed after the first charges
MAX_WHOLE_SIGMA = 2.0 ** 26
# any one planned measurement's noise scale: values past 2^63 stay beyond ~10^4 scales
MAX_SCALE = 2.0 ** 49


def shown_int(v) -> str:
    """An integer for a message, its digits capped."""
    try:
        text = str(int(v))
    except ValueError:  # past the digits str() converts
        return f"an integer of {int(v).bit_length()} bits"
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} digits)"


@dataclass
class Accountant:
    """Charges every measurement before it is made, in exact rational arithmetic, and
    returns the noise distribution that the charge pays for (never less noise)."""
    epsilon: float
    delta: float
    sensitivity: int = 1
    conversion: str = "cks"
    mechanism: str | None = None
    ledger: list = field(default_factory=list)

    def __post_init__(self):
        check_epsilon_delta(self.epsilon, self.delta)
        s = self.sensitivity
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise PrivacyParameterError(
                f"sensitivity (max records per individual) must be an integer >= 1, got {s!r}")
        if s > MAX_SENSITIVITY:  # past it the noise may not fit 64 bits, found mid-fit
            raise PrivacyParameterError(
                f"sensitivity (max records per individual) must be at most {MAX_SENSITIVITY} "
                f"(the most rows a table may have), got {shown_int(s)}")
        self.sensitivity = int(s)
        self.rho = eps_delta_to_rho(self.epsilon, self.delta, self.conversion)
        sigma = gaussian_sigma(self.rho, self.sensitivity)
        if sigma > MAX_WHOLE_SIGMA:
            raise PrivacyParameterError(
                f"(epsilon={self.epsilon:g}, delta={self.delta:g})"
                + (f" with {self.sensitivity} records per individual" if self.sensitivity > 1
                   else "") + " buys too little: the whole budget on one count "
                f"would add noise of standard deviation {sigma:.3g} (at most "
                f"{MAX_WHOLE_SIGMA:.3g}: a share of it could draw noise past 64 bits); use "
                "a larger epsilon or delta" + (", or fewer records per individual"
                                               if self.sensitivity > 1 else ""))
        self._spent = Fraction(0)  # of the whole budget, exactly

    # -- planning (data independent) -------------------------------------------
    def scale_for(self, fraction: float, mechanism: str, l1: float = 1.0,
                  l2: float = 1.0) -> tuple[float, float]:
        """(noise scale parameter, noise std) that a budget fraction buys for a query whose
        L1 / L2 sensitivity is l1 / l2 times the records per individual (planning only:
        charge() computes the exact parameter)."""
        if mechanism == "gaussian":
            sigma = gaussian_sigma(fraction * self.rho, self.sensitivity * l2)
            return sigma, sigma
        b = laplace_scale(fraction * self.epsilon, self.sensitivity * l1)
        return b, math.sqrt(2.0) * b

    def choose_mechanism(self, fractions, cells, prefer: str = "auto") -> str:
        """Pick the mechanism with the smaller total noise variance over the plan."""
        if prefer not in ("auto", "gaussian", "laplace"):
            raise PrivacyParameterError(f"unknown mechanism {prefer!r}")
        if prefer == "auto":
            var = {m: left_sum(c * self.scale_for(f, m)[1] ** 2
                               for f, c in zip(fractions, cells))
                   for m in ("gaussian", "laplace")}
            prefer = min(var, key=var.get)
        if self.ledger and prefer != self.mechanism:
            raise BudgetExceededError("cannot switch mechanism after measurements were made")
        worst = max((self.scale_for(f, prefer)[0] for f in fractions if f > 0), default=0.0)
        if worst > MAX_SCALE:  # a plan known before the first charge (dpsyn's)
            raise PrivacyParameterError(
                f"the plan's smallest share of the budget buys {prefer} noise of scale "
                f"{worst:.3g}, past what a count can hold; use a larger epsilon, fewer "
                "marginals or more even workload weights")
        self.mechanism = prefer
        return prefer

    # -- spending ----------------------------------------------------------------
    @property
    def spent_fraction(self) -> float:
        return float(self._spent)

    def charge(self, fraction: float, label: str, columns, cells: int, l1=1,
               l2_sq=1) -> LedgerEntry:
        """Record one measurement and return the noise it buys; refuse it when it would
        overspend.  l1 and l2_sq (exact numbers) are the query's L1 sensitivity and
        squared L2 sensitivity per record; an individual's D records multiply them by D
        and D^2.  A plan whose float shares overshoot 1 by rounding gets what is left."""
        if self.mechanism is None:
            raise BudgetExceededError("choose_mechanism() must run before any measurement")
        if isinstance(fraction, float) and not math.isfinite(fraction) or not fraction > 0:
            raise PrivacyParameterError(f"budget fraction must be > 0, got {fraction}")
        f, left = Fraction(fraction), 1 - self._spent
        if f > left:
            if f - left > _TOL or left == 0:
                raise BudgetExceededError(
                    f"measurement {label!r} needs {fraction:.4g} of the budget but only "
                    f"{float(left):.4g} is left")
            f = left
        d = self.sensitivity
        if self.mechanism == "gaussian":
            rho_i = f * Fraction(self.rho)
            noise = DiscreteGaussian.at_least(d * d * Fraction(l2_sq) / (2 * rho_i))
            rho, eps, scale = float(rho_i), None, noise.sigma
        else:
            eps_i = f * Fraction(self.epsilon)
            noise = DiscreteLaplace.at_least(d * Fraction(l1) / eps_i)
            rho, eps, scale = None, float(eps_i), noise.scale
        self._spent += f
        e = LedgerEntry(label=label, columns=tuple(columns), cells=int(cells),
                        mechanism=self.mechanism, fraction=float(f), rho=rho, epsilon=eps,
                        sigma=noise.sigma, scale=scale, noise=noise)
        self.ledger.append(e)
        return e

    def summary(self) -> dict:
        """What was spent, in the units of the guarantee that holds."""
        spent = self._spent
        if self.mechanism == "laplace":
            eps = float(spent * Fraction(self.epsilon))
            guarantee = f"({eps:.6g}, 0)-DP by basic composition"
        else:
            rho = float(spent * Fraction(self.rho))
            eps = rho_to_epsilon(rho, self.delta, self.conversion) if rho > 0 else 0.0
            guarantee = f"{rho:.6g}-zCDP, hence ({eps:.6g}, {self.delta:g})-DP"
        out = {"epsilon": self.epsilon, "delta": self.delta, "rho": self.rho,
               "conversion": self.conversion, "sensitivity": self.sensitivity,
               "mechanism": self.mechanism, "spent_fraction": float(spent),
               "guarantee": guarantee, "measurements": [e.to_dict() for e in self.ledger]}
        if self.mechanism == "laplace":  # zCDP's figures were not used: no reader misled
            del out["rho"], out["conversion"]
        return out
