"""Sums of Python floats that are the same on every Python.

CPython 3.12's sum() adds floats with Neumaier's compensation; 3.11's adds them one
after another.  The two differ in the last bits, and a consistency target, a budget
fraction or an adaptive score that differs in its last bit can change a seeded release
(an H100 running Python 3.12 wrote another flights table than a 2-core machine running
3.11, from the same noise).  left_sum is the plain left fold, 3.11's sum(), on any
version, so seeded outputs made before stay as they were.
"""
from __future__ import annotations

import functools
import operator


def left_sum(values, start=0):
    """start + v0 + v1 + ..., added one after another (never compensated)."""
    return functools.reduce(operator.add, values, start)
