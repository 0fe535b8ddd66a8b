"""The only code that reads private records.  Its measurements charge the accountant
first, then count and add exact noise (the exact statistics they use, such as
errors.errors or marginals.exact_marginals, are called only after a charge, or on data
that is not private); everything outside this package works on the noisy values it
returns (post-processing)."""
