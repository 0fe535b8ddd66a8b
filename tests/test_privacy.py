import math

import pytest

from gpu_dpsyn.errors import BudgetExceededError, PrivacyParameterError
from gpu_dpsyn.privacy import (Accountant, eps_delta_to_rho, gaussian_sigma, laplace_scale,
    rho_to_epsilon, zcdp_delta)

BS = "bun-steinke"


def test_rho_closed_form():
    L = math.log(1 / 1e-9)
    assert eps_delta_to_rho(1.0, 1e-9, BS) == pytest.approx((math.sqrt(1 + L) - math.sqrt(L)) ** 2)


def test_sigma_for_465_marginals_matches_design():
    # DESIGN.md: eps=10, delta=3.45e-11, k=465 equal shares -> sigma = 16.39 (Bun-Steinke)
    rho = eps_delta_to_rho(10, 3.45e-11, BS)
    assert gaussian_sigma(rho / 465) == pytest.approx(16.39, abs=0.005)
    acc = Accountant(10, 3.45e-11, conversion=BS)
    acc.choose_mechanism([1 / 465] * 465, [100] * 465)
    e = acc.charge(1 / 465, "m", ["a"], 100)
    assert e.mechanism == "gaussian" and e.sigma == pytest.approx(16.39, abs=0.005)
    # the tight conversion buys more rho, hence less noise, for the same guarantee
    assert Accountant(10, 3.45e-11).scale_for(1 / 465, "gaussian")[0] < 16.0


def _log_delta_at(rho, eps, a):
    """log of the CKS bound exp((a-1)(a rho - eps)) / (a-1) * (1 - 1/a)^a at one alpha."""
    return (a - 1) * (a * rho - eps) - math.log(a - 1) + a * math.log(1 - 1 / a)


@pytest.mark.parametrize("rho,eps", [(0.01, 1.0), (0.5, 3.0), (0.001, 0.2)])
def test_zcdp_delta_is_the_infimum_over_alpha(rho, eps):
    grid = [1 + 10 ** (i / 400) for i in range(-2000, 1600)]
    best = math.exp(min(_log_delta_at(rho, eps, a) for a in grid))
    got = zcdp_delta(rho, eps)
    assert got <= best * (1 + 1e-9) and got == pytest.approx(best, rel=1e-4)


@pytest.mark.parametrize("eps,delta", [(0.3, 1e-9), (1, 1e-9), (1, 1e-6), (8, 1e-5)])
def test_tight_conversion_is_safe_tight_and_beats_bun_steinke(eps, delta):
    rho = eps_delta_to_rho(eps, delta)
    assert zcdp_delta(rho, eps) <= delta < zcdp_delta(rho * 1.001, eps)
    assert rho > 1.1 * eps_delta_to_rho(eps, delta, BS)
    # Bun-Steinke is a valid but looser route: its rho is safe under the tight bound too
    assert zcdp_delta(eps_delta_to_rho(eps, delta, BS), eps) <= delta


@pytest.mark.parametrize("conv", ["cks", BS])
@pytest.mark.parametrize("eps,delta", [(0.3, 1e-9), (1, 1e-6), (8, 1e-5)])
def test_rho_epsilon_round_trip(eps, delta, conv):
    assert rho_to_epsilon(eps_delta_to_rho(eps, delta, conv), delta, conv) == pytest.approx(eps)


def test_unknown_conversion():
    with pytest.raises(PrivacyParameterError, match="conversion"):
        eps_delta_to_rho(1, 1e-9, "magic")


def test_sensitivity_scales_noise():
    assert gaussian_sigma(0.5, 3) == pytest.approx(3.0)
    assert laplace_scale(2.0, 4) == pytest.approx(2.0)


def test_mechanism_choice_follows_variance():
    # one small query: Laplace (var 2/eps^2 = 2) beats Gaussian (sigma ~ 6.5 at delta 1e-9)
    acc = Accountant(1.0, 1e-9)
    assert acc.choose_mechanism([1.0], [10]) == "laplace"
    e = acc.charge(1.0, "m", ["a"], 10)
    assert e.epsilon == pytest.approx(1.0) and e.scale == pytest.approx(1.0)
    assert "(1, 0)-DP" in acc.summary()["guarantee"]
    # 36 queries: Laplace var 2*36^2 > Gaussian var 36/(2 rho)
    acc2 = Accountant(1.0, 1e-9)
    assert acc2.choose_mechanism([1 / 36] * 36, [50] * 36) == "gaussian"


def test_budget_cannot_be_overspent():
    acc = Accountant(1.0, 1e-6)
    acc.choose_mechanism([0.5, 0.5], [4, 4], "gaussian")
    acc.charge(0.5, "a", ["x"], 4)
    acc.charge(0.5, "b", ["y"], 4)
    with pytest.raises(BudgetExceededError, match="only"):
        acc.charge(0.01, "c", ["z"], 4)
    s = acc.summary()
    assert s["spent_fraction"] == pytest.approx(1.0)
    assert sum(m["rho"] for m in s["measurements"]) == pytest.approx(acc.rho)


def test_charge_requires_mechanism():
    with pytest.raises(BudgetExceededError):
        Accountant(1.0, 1e-6).charge(0.1, "a", ["x"], 2)


@pytest.mark.parametrize("eps,delta,match", [
    (0, 1e-9, "epsilon"), (-1, 1e-9, "epsilon"), (float("nan"), 1e-9, "epsilon"),
    (1, 0, "delta"), (1, 1, "delta"), (1, -0.1, "delta"), ("1", 1e-9, "epsilon"),
])
def test_bad_parameters(eps, delta, match):
    with pytest.raises(PrivacyParameterError, match=match):
        Accountant(eps, delta)


def test_bad_sensitivity():
    with pytest.raises(PrivacyParameterError, match="sensitivity"):
        Accountant(1, 1e-9, sensitivity=0)


# -- exact accounting, failing closed --------------------------------------------------

def test_tiny_delta_gives_a_finite_budget():
    # 1 / 1e-320 overflowed to inf, making rho and sigma NaN (and the GPU released 0 noise)
    for conv in ("cks", BS):
        rho = eps_delta_to_rho(1.0, 1e-320, conv)
        assert math.isfinite(rho) and 0 < rho < eps_delta_to_rho(1.0, 1e-9, conv)
        acc = Accountant(1.0, 1e-320, conversion=conv)
        acc.choose_mechanism([1.0], [3], "gaussian")
        assert math.isfinite(acc.charge(1.0, "m", ["a"], 3).sigma)


def test_a_non_finite_budget_fails_closed(monkeypatch):
    from gpu_dpsyn.privacy import accountant
    monkeypatch.setattr(accountant, "_bisect", lambda *a, **k: (float("nan"),) * 2)
    with pytest.raises(PrivacyParameterError, match="no usable zCDP budget"):
        Accountant(1.0, 1e-9)


def test_charges_are_exact_and_never_exceed_the_budget():
    from fractions import Fraction

    from gpu_dpsyn.selection.greedy import c23_fractions
    acc = Accountant(1.0, 1e-9, sensitivity=2)
    fr = c23_fractions([7 * (i % 13 + 1) for i in range(190)], 1.0)  # floats: sum may be > 1
    acc.choose_mechanism(fr, [1] * 190, "gaussian")
    for f in fr:
        e = acc.charge(f, "m", ["a"], 4)
        # the drawn sigma^2 pays at least D^2 / (2 rho_i), exactly
        assert e.noise.sigma2 >= Fraction(4) / (2 * Fraction(e.rho))
    assert acc._spent <= 1 and sum(Fraction(e.rho) for e in acc.ledger) <= Fraction(acc.rho)
    with pytest.raises(BudgetExceededError):
        acc.charge(1e-6, "more", ["a"], 4)


def test_noise_parameters_cover_the_query_sensitivity():
    from fractions import Fraction
    acc = Accountant(1.0, 1e-9, sensitivity=3)
    acc.choose_mechanism([0.5, 0.5], [1, 1], "gaussian")
    e = acc.charge(0.5, "indif", ["all pairs"], 10, l1=40, l2_sq=160)  # 10 InDif scores
    assert e.noise.sigma2 >= Fraction(9 * 160) / (2 * Fraction(e.rho))
    assert e.to_dict()["noise"]["sigma2"] == f"{e.noise.p}/{e.noise.q}"
    lap = Accountant(1.0, 1e-9, sensitivity=3)
    lap.choose_mechanism([1.0], [1], "laplace")
    e = lap.charge(1.0, "m", ["a"], 4, l1=2)
    assert Fraction(e.noise.t, e.noise.s) >= Fraction(3 * 2) / Fraction(1.0)
    assert e.to_dict()["noise"]["distribution"] == "discrete_laplace"


def test_sensitivity_must_be_an_integer():
    for bad in (2.5, 0, -1, True, "2"):
        with pytest.raises(PrivacyParameterError, match="sensitivity"):
            Accountant(1, 1e-9, sensitivity=bad)


def test_a_spent_budget_refuses_even_a_rounding_sized_charge():
    acc = Accountant(1.0, 1e-9)
    acc.choose_mechanism([1.0], [3], "gaussian")
    acc.charge(1.0, "all", ["a"], 3)
    with pytest.raises(BudgetExceededError):
        acc.charge(1e-10, "more", ["a"], 3)


def test_a_plan_whose_smallest_share_buys_noise_past_64_bits_is_refused_before_charging():
    acc = Accountant(1.0, 1e-9)
    for mechanism in ("gaussian", "laplace"):
        with pytest.raises(PrivacyParameterError, match="smallest share"):
            acc.choose_mechanism([0.5, 1e-40], [10, 10], mechanism)
    assert acc.ledger == [] and acc.choose_mechanism([0.5, 1e-12], [10, 10], "auto")


def test_a_laplace_summary_names_no_zcdp_figures():
    """A Laplace run's guarantee is (eps, 0)-DP by basic composition: the ledger does not
    show the zCDP rho its (eps, delta) would buy, nor the conversion that was not used
    (a reader took them for what was spent)."""
    lap = Accountant(1.0, 1e-9)
    lap.choose_mechanism([1.0], [1], "laplace")
    lap.charge(1.0, "m", ["a"], 4)
    s = lap.summary()
    assert "rho" not in s and "conversion" not in s
    assert s["guarantee"].startswith("(1, 0)-DP")
    gauss = Accountant(1.0, 1e-9)
    gauss.choose_mechanism([1.0], [1], "gaussian")
    g = gauss.summary()
    assert g["rho"] == gauss.rho and g["conversion"] == "cks"
