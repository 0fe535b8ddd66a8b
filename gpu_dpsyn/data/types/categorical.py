"""Categorical columns' listed values from the schema: finite text, numbers or booleans,
each once (as the data matches them: data/matching.value_key).  Every refusal is a
SchemaError raised when the schema loads."""
from __future__ import annotations

import math

import numpy as np

from gpu_dpsyn.data.matching import plain, value_key
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.errors import SchemaError


def parse_values(name: str, spec: dict, max_values: int) -> tuple[list, list]:
    """(the column's values as plain Python values, their matching keys)."""
    values = spec.get("values")
    if not isinstance(values, list) or not values:
        raise SchemaError(f"column {shown(name)}: categorical column needs a non-empty "
                          "'values' list")
    values = [plain(v) for v in values]
    for v in values:
        if isinstance(v, (float, np.floating)) and math.isinf(v):
            raise SchemaError(f"column {shown(name)}: 'values' holds "
                              f"{'infinity' if v > 0 else '-infinity'}; list only finite "
                              "values")
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            raise SchemaError(f"column {shown(name)}: 'values' holds null (or NaN); list only "
                              "real values and mark the column \"nullable\": true")
        if not isinstance(v, (str, bool, int, float)):
            raise SchemaError(f"column {shown(name)}: 'values' must hold text, numbers or "
                              f"booleans, not {v!r}")
    keys = [value_key(v) for v in values]
    if len(set(keys)) != len(keys):
        raise SchemaError(f"column {shown(name)}: 'values' has duplicates")
    if len(values) > max_values:
        raise SchemaError(f"column {shown(name)}: {len(values)} values is too large a domain "
                          f"(max {max_values}); group them first")
    return values, keys
