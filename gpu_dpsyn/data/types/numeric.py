"""Numeric columns' bins from the schema: equal-width (or, for integers, equal-count)
bins between a public min and max, or the edges as written.  Every refusal is a
SchemaError raised when the schema loads."""
from __future__ import annotations

from gpu_dpsyn.data.text import shown  # noqa: F401 (capped values in messages)

import math

import numpy as np

from gpu_dpsyn.errors import SchemaError
from gpu_dpsyn.data.types.support import default_edges, parse_support


def _is_number(x) -> bool:
    """A finite number float64 holds (an int of hundreds of digits is none)."""
    if not isinstance(x, (int, float, np.integer, np.floating)) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def _min_max(name: str, spec: dict, integer: bool, alternative: str) -> tuple:
    """The column's checked range; an integer column's rounded inwards to integers."""
    lo, hi = spec.get("min"), spec.get("max")
    for key, v in (("min", lo), ("max", hi)):
        if _infinite(v):
            raise SchemaError(f"column {shown(name)}: {key!r} is {_inf_word(v)}; give a finite "
                              "number (the bins must cover a finite range)")
    if not (_is_number(lo) and _is_number(hi)):
        raise SchemaError(f"column {shown(name)}: numeric column needs numbers 'min' and 'max' "
                          f"{alternative}, got min={shown(lo)} max={shown(hi)}")
    if hi < lo or (hi == lo and not integer):
        raise SchemaError(f"column {shown(name)}: 'max' ({hi}) must be greater than 'min' ({lo})")
    if integer and math.ceil(lo) > math.floor(hi):
        raise SchemaError(f"column {shown(name)}: no integer lies in [{lo}, {hi}]; widen the "
                          "range or drop \"integer\": true")
    return (math.ceil(lo), math.floor(hi)) if integer else (lo, hi)


def _infinite(v) -> bool:
    return isinstance(v, (float, np.floating)) and math.isinf(v)


def _inf_word(v) -> str:
    return "infinity" if v > 0 else "-infinity"


def _agree(name: str, spec: dict, edges: list, integer: bool) -> None:
    """The edges decide the bins: a 'min', 'max' or 'bins' beside them must say the same
    (it was ignored, so a different one meant something silently not done)."""
    lo, hi = edges[0], edges[-1]
    if integer:  # as Column.value_range: the top edge is exclusive
        hi = hi - 1 if float(hi).is_integer() else math.floor(hi)
    for key, want in (("min", lo), ("max", hi), ("bins", len(edges) - 1)):
        if key in spec and not (_is_number(spec[key]) and spec[key] == want):
            raise SchemaError(f"column {shown(name)}: {key!r} {spec[key]!r} disagrees with 'edges' "
                              f"(range [{lo}, {hi}], {len(edges) - 1} bins); give 'edges' "
                              f"alone, or {key!r} = {want}")


def _numeric_edges(name: str, spec: dict, integer: bool, support=None) -> list:
    if "edges" in spec:
        edges = spec["edges"]
        if isinstance(edges, list) and any(map(_infinite, edges)):
            raise SchemaError(f"column {shown(name)}: 'edges' holds "
                              f"{_inf_word(next(filter(_infinite, edges)))}; give finite "
                              "numbers (the bins must cover a finite range)")
        if not isinstance(edges, list) or len(edges) < 2 or not all(map(_is_number, edges)):
            raise SchemaError(f"column {shown(name)}: 'edges' must be a list of >= 2 numbers")
        if any(b < a for a, b in zip(edges, edges[1:])):
            raise SchemaError(f"column {shown(name)}: 'edges' must be increasing")
        if any(a == c for a, c in zip(edges, edges[2:])):
            raise SchemaError(f"column {shown(name)}: an edge repeated more than twice; one "
                              "repeat (a, a) is the bin holding just a")
        if integer and any(a == b for a, b in zip(edges, edges[1:])):
            raise SchemaError(f"column {shown(name)}: 'edges' of an integer column must be "
                              "strictly increasing (bin [a, a + 1) holds just a)")
        if integer:
            for a, b in zip(edges, edges[1:-1] + [edges[-1] + 1]):
                if math.ceil(b) - math.ceil(a) < 1:
                    raise SchemaError(
                        f"column {shown(name)}: bin [{a}, {b}) holds no integer; widen it")
        edges = [float(e) if not integer else (int(e) if float(e).is_integer() else float(e))
                 for e in edges]
        _agree(name, spec, edges, integer)
        return edges
    lo, hi = _min_max(name, spec, integer, "(or 'edges')")
    if integer:
        span = hi - lo + 1
        if support is not None and "bins" not in spec:  # bins of equal support counts
            return default_edges(parse_support(name, support, lo, hi), lo, hi, 32)
        bins = spec.get("bins", min(span, 32))
    else:
        bins = spec.get("bins", 32)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise SchemaError(f"column {shown(name)}: 'bins' must be a positive integer, got {bins!r}")
    bins = int(bins)
    if integer:
        if bins > span:
            bins = span  # one code per integer is already exact
        # bin k holds lo + [ceil(k*span/bins), ceil((k+1)*span/bins)); edges in value units
        return [lo + -((-k * span) // bins) for k in range(bins)] + [hi + 1]
    with np.errstate(all="ignore"):  # a range too wide for float64: check_column refuses it
        return [float(x) for x in np.linspace(lo, hi, bins + 1)]


def rounded_range(lo: float, hi: float) -> tuple:
    """[lo, hi] widened to two significant digits (of the span, or of the end where it is
    smaller): -0.899..6.066 is drafted as -0.9..6.1 and 900.23..390233 as 900..400000, a
    range a reviewer reads and replaces, not 17 digits copied from one record."""
    if hi <= lo:
        return lo, lo + 1.0

    def step(v):
        s = 10.0 ** (math.floor(math.log10(hi - lo)) - 1)
        return min(s, 10.0 ** (math.floor(math.log10(abs(v))) - 1)) if v else s

    def out(v, s, f):
        return round(f(v / s) * s, max(0, -math.floor(math.log10(s))))
    # (rounding to the digits never cuts a value off)
    return min(lo, out(lo, step(lo), math.floor)), max(hi, out(hi, step(hi), math.ceil))


def significant(e: np.ndarray, digits: int) -> np.ndarray:
    """The inner edges at `digits` significant digits (readable in the draft), the ends as
    they are."""
    out = e.copy()
    inner = e[1:-1]
    mag = np.floor(np.log10(np.where(inner == 0, 1.0, np.abs(inner))))
    scale = 10.0 ** (digits - 1 - mag)
    out[1:-1] = np.round(inner * scale) / scale
    return out
