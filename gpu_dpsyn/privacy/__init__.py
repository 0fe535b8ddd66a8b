"""Privacy: the accountant (budget, ledger), the secure generator and exact samplers."""
from gpu_dpsyn.privacy.accountant import (CONVERSIONS, Accountant, LedgerEntry,
    check_epsilon_delta, eps_delta_to_rho, gaussian_sigma, laplace_scale, rho_to_epsilon,
    zcdp_delta)
from gpu_dpsyn.privacy.samplers import DiscreteGaussian, DiscreteLaplace

__all__ = ["CONVERSIONS", "Accountant", "LedgerEntry", "check_epsilon_delta", "eps_delta_to_rho",
           "gaussian_sigma", "laplace_scale", "rho_to_epsilon", "zcdp_delta", "DiscreteGaussian",
           "DiscreteLaplace"]
