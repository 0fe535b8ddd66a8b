"""Which records belong to one individual: the id column's values matched as one person
would be written several ways (contribution bounding and `check` both count so)."""
from __future__ import annotations

import decimal
import math
import numbers
from fractions import Fraction

import numpy as np
import pandas as pd

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"  # (any script's digits)
_PLAIN = r"-?(?:[1-9][0-9]*[1-9]|[1-9])"  # its own number_key: ASCII, no 0 at either end


def individual_codes(ids) -> np.ndarray:
    """Each record's individual as an integer code.  Ids match as text without the spaces
    around it, and text that is a number as that number (" 1", "1", "1.0", "01", "1e0", 1
    and 1.0 are one individual; so are "10", "10.0" and "1e1"), so one person written
    several ways is bounded once: two ids merged drop more records, never fewer.  Each
    distinct id is read once."""
    codes, uniques = pd.factorize(ids)
    if np.asarray(uniques).dtype.kind in "iuf":  # numbers of one type: equal ones are one
        return codes
    uniques = np.asarray(uniques, dtype=object)
    text = pd.Series(uniques).astype(str).str.strip()
    number = text.str.fullmatch(_NUMBER).to_numpy(dtype=bool)
    odd = number & ~text.str.fullmatch(_PLAIN).to_numpy(dtype=bool)
    if odd.any():
        text[odd] = [number_key(t) for t in text[odd]]
    text[number] = "\0" + text[number]  # a number's, apart from any text
    key = pd.factorize(text)[0]
    # factorize made Python-equal ids one (True == 1 == 1 + 0j, 2.0**60 == 2**60) and only
    # the first was read as text ("True", "1.152921504606847e+18"): a number is also keyed
    # by its exact value, else 1 went with True and "1" apart, and one person kept 2 D
    extra = [(i, "\0" + v) for i, v in enumerate(map(value_key, uniques)) if v is not None]
    if extra:
        key = _joined(key, text, extra)
    return np.where(codes < 0, -1, key[codes])  # (missing: -1)


def value_key(v) -> str | None:
    """number_key of a number id's exact value (None: text, no number, or an int, whose
    own text is exact already)."""
    if isinstance(v, np.bool_):
        v = bool(v)
    if isinstance(v, (str, bytes)) or not isinstance(v, numbers.Number) or \
            isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return None
    if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
        if v.imag != 0:
            return None
        v = v.real
    if isinstance(v, decimal.Decimal):  # its text is exact (1E+999999999 not expanded)
        return number_key(str(v)) if v.is_finite() else None
    if isinstance(v, float):  # n / 2^k is n 5^k / 10^k
        if not math.isfinite(v):
            return None
        n, d = v.as_integer_ratio()
        k = d.bit_length() - 1
        return _scaled_key(n * 5 ** k, -k)
    try:
        exact = isinstance(v, numbers.Rational)
        if not exact and float(v) != v:  # a long double float() rounds: not this number
            return None
        f = Fraction(v if exact else float(v))
    except Exception:  # noqa: BLE001 - infinities, NaN, a number that cannot be read
        return None
    den, twos, fives = f.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    places = max(twos, fives)  # f * 10^places is whole; a float's places are <= 1074
    if den != 1 or places > 1100:  # no number text writes it (or none anyone would)
        return None
    return _scaled_key(f.numerator * 10 ** places // f.denominator, -places)


def _scaled_key(m: int, exp: int) -> str:
    """number_key(f"{m}e{exp}"), without reading digits one by one."""
    if m == 0:
        return "0"
    digits = str(abs(m))
    s = digits.rstrip("0")
    exp += len(digits) - len(s)
    key = ("-" if m < 0 else "") + s
    return key if exp == 0 else f"{key}e{exp}"


def _joined(key: np.ndarray, text: pd.Series, extra: list) -> np.ndarray:
    """Codes of the unions of ids that share a key: their own text's (key) or one of
    `extra` (unique index, key text)."""
    nodes = np.concatenate([np.arange(len(key)), [i for i, _ in extra]]).astype(np.int64)
    keys = pd.factorize(pd.concat([text, pd.Series([k for _, k in extra])],
                                  ignore_index=True))[0]
    label = np.arange(len(key), dtype=np.int64)
    while True:  # each id takes the least label of any id it shares a key with
        least = np.full(keys.max() + 1, len(key), dtype=np.int64)
        np.minimum.at(least, keys, label[nodes])
        new = label.copy()
        np.minimum.at(new, nodes, least[keys])
        if np.array_equal(new, label):
            return pd.factorize(label)[0]
        label = new


def number_key(text: str) -> str:
    """One text for every way of writing a number, exactly (its digits without leading or
    trailing zeros, and the exponent: no rounding, no overflow): "10.0" and "1e1" are
    "1e1", "-0" is "0"."""
    sign, digits, exp = decimal.Decimal(text).as_tuple()
    s = "".join(map(str, digits)).lstrip("0")
    if not s:
        return "0"
    zeros = len(s) - len(s.rstrip("0"))
    s, exp = s.rstrip("0"), exp + zeros
    key = ("-" if sign else "") + s
    return key if exp == 0 else f"{key}e{exp}"
