"""A datetime column's values as text (datetime.as_output) written by NumPy: each code's
digits or words put into a matrix of bytes, a row a value, and the rows made into one
Arrow string array.  Bins of whole seconds give a release millions of distinct values,
which isoformat or pandas' strftime wrote one by one (10^6: 1 to 7 s); Arrow's strftime
is no faster (about 2 s).  The codes written here are those glibc's strftime writes in
the C locale; a layout holding any other (%s, %k, %l, %P, flags such as %-d, %E and %O
forms), or words while the locale is another, is written value by value as before.
tests/test_date_output.py compares both to the byte."""
from __future__ import annotations

import datetime as dt
import locale
import re
from functools import cached_property

import numpy as np
import pandas as pd

_NS = 10 ** 9
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
# a code's digits: (width, its number from the fields)
_NUMBERS = {
    "Y": (4, lambda f: f.date[0]), "C": (2, lambda f: f.date[0] // 100),
    "y": (2, lambda f: f.date[0] % 100), "m": (2, lambda f: f.date[1]),
    "d": (2, lambda f: f.date[2]), "e": (2, lambda f: f.date[2]),  # (e: space-padded)
    "j": (3, lambda f: f.date[3] + 1), "U": (2, lambda f: (f.date[3] + 7 - f.wday) // 7),
    "W": (2, lambda f: (f.date[3] + 7 - f.monday0) // 7),
    "G": (4, lambda f: f.iso_week[0]), "g": (2, lambda f: f.iso_week[0] % 100),
    "V": (2, lambda f: f.iso_week[1]), "H": (2, lambda f: f.hour),
    "I": (2, lambda f: (f.hour + 11) % 12 + 1), "M": (2, lambda f: f.minute),
    "S": (2, lambda f: f.second), "f": (6, lambda f: f.sub // 1000),
    "w": (1, lambda f: f.wday), "u": (1, lambda f: f.monday0 + 1)}
# a code's words (the C locale's): (the words, which one from the fields)
_WORDS = {"a": ([d[:3] for d in _DAYS], lambda f: f.wday),
          "A": (list(_DAYS), lambda f: f.wday),
          "b": ([m[:3] for m in _MONTHS], lambda f: f.date[1] - 1),
          "B": (list(_MONTHS), lambda f: f.date[1] - 1),
          "p": (["AM", "PM"], lambda f: (f.hour >= 12).astype(np.int64))}
# codes glibc spells with others in the C locale (%c, %x, %X: the locale's layouts)
_SPELLED = {"c": "%a %b %e %H:%M:%S %Y", "D": "%m/%d/%y", "F": "%Y-%m-%d", "h": "%b",
            "r": "%I:%M:%S %p", "R": "%H:%M", "T": "%H:%M:%S", "x": "%m/%d/%y",
            "X": "%H:%M:%S"}
_LITERAL = {"n": b"\n", "t": b"\t", "%": b"%"}
_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(),
                       np.uint8).reshape(100, 2)  # "00" to "99"
_IN_LOCALE = frozenset("aAbBchprxX")
_TOKEN = re.compile(r"%.|%$|[^%]+", re.S)


def plan(layout: str) -> list | None:
    """layout as the codes written here (one letter each) and literal bytes, in order;
    None where it holds a code not written here (then the old path writes it)."""
    if "\x00" in layout or not _utf8(layout) or (
            _IN_LOCALE.intersection(c[1:] for c in _TOKEN.findall(layout) if c[0] == "%")
            and locale.setlocale(locale.LC_TIME) not in ("C", "POSIX")):
        return None  # (a NUL ends C's layout; text Arrow cannot hold; other words)
    out = []
    for tok in _TOKEN.findall(layout):
        code = tok[1:] if tok[0] == "%" else None
        if code is None:
            out.append(tok.encode("utf-8"))
        elif code in _SPELLED:
            out += plan(_SPELLED[code])
        elif code in _LITERAL:
            out.append(_LITERAL[code])
        elif code in _NUMBERS or code in _WORDS:
            out.append(code)
        else:
            return None
    return out


def _utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return False
    return True


def as_text(t: pd.Series, layout: str | None, want) -> pd.Series:
    """t (datetime64, naive or in a zone) as text of dtype `want`: layout's strftime
    codes, or None: isoformat's; missing stays missing.  Each distinct value once."""
    import pyarrow as pa
    codes, uniq = pd.factorize(t)
    u = pd.DatetimeIndex(uniq).as_unit("ns")
    steps = None if layout is None else plan(layout)
    if layout is not None and steps is None:
        text = pa.array(list(u.strftime(layout)), pa.large_string())
    else:
        text = _iso(u) if layout is None else _joined(_pieces(_Fields(u), steps), len(u))
    taken = text.take(pa.array(codes, pa.int64(), mask=codes < 0))
    if isinstance(want, pd.StringDtype) and want.storage == "pyarrow":
        return pd.Series(pd.array(taken, dtype=want), index=t.index)
    return pd.Series(taken.to_numpy(zero_copy_only=False), index=t.index,
                     dtype=object).astype(want)


class _Fields:
    """The wall time's calendar fields, each made when first asked for."""

    def __init__(self, u: pd.DatetimeIndex):
        self.wall = (u.tz_localize(None) if u.tz is not None else u).asi8
        sec, self.sub = np.divmod(self.wall, _NS)  # floored: before 1970 too
        self.days, tod = np.divmod(sec, 86400)
        self.hour, self.minute, self.second = tod // 3600, tod // 60 % 60, tod % 60
        self.wday = (self.days + 4) % 7  # 0 Sunday (1970-01-01: a Thursday)
        self.monday0 = (self.wday + 6) % 7

    @cached_property
    def date(self):
        """(year, month, day, day of the year from 0)."""
        d = self.days.astype("M8[D]")
        y, m = d.astype("M8[Y]"), d.astype("M8[M]")  # NumPy floors these too
        return (y.astype(np.int64) + 1970, m.astype(np.int64) % 12 + 1,
                (d - m.astype("M8[D]")).astype(np.int64) + 1,
                (d - y.astype("M8[D]")).astype(np.int64))

    @cached_property
    def iso_week(self):
        """(ISO year, ISO week): those of the week's Thursday."""
        thu = (self.days - self.monday0 + 3).astype("M8[D]")
        y = thu.astype("M8[Y]")
        return y.astype(np.int64) + 1970, (thu - y.astype("M8[D]")).astype(np.int64) // 7 + 1


def _pieces(f: _Fields, steps: list) -> list:
    """Each step as (bytes, n x width, lengths or None where every row is full)."""
    n, out = len(f.days), []
    for step in steps:
        if isinstance(step, bytes):
            out.append((np.broadcast_to(np.frombuffer(step, np.uint8), (n, len(step))),
                        None))
        elif step in _WORDS:
            words, which = _WORDS[step]
            out.append(_table(words, which(f)))
        else:
            width, number = _NUMBERS[step]
            mat = _digits(number(f), width)
            if step == "e":  # days padded with a space
                mat[:, 0] = np.where(mat[:, 0] == ord("0"), ord(" "), mat[:, 0])
            out.append((mat, None))
    return out


def _iso(u: pd.DatetimeIndex):
    """Timestamp.isoformat: no fraction in whole seconds, else six digits, nine with
    nanoseconds; then the zone's offset (+01:00, seconds where it has them)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    f = _Fields(u)
    parts = _pieces(f, plan("%Y-%m-%dT%H:%M:%S"))
    sub = f.sub
    if sub.any():  # ".123456789", its first 7 bytes where no nanoseconds
        dot = np.full((len(u), 1), ord("."), np.uint8)
        parts.append((np.hstack([dot, _digits(sub, 9)]),
                      np.where(sub == 0, 0, np.where(sub % 1000 == 0, 7, 10))))
    if u.tz is None:
        return _joined(parts, len(u))
    off = f.wall - u.asi8  # nanoseconds east of UTC
    which, offs = pd.factorize(off)  # a few per zone
    parts.append(_table([_offset(int(o)) for o in offs], which))
    text = _joined(parts, len(u))
    # nanoseconds beside an offset with seconds (local mean time): pandas 2 put their
    # digits six characters from the end, inside the offset; these few as this pandas
    # writes them, per value
    odd = (sub % 1000 != 0) & (off % (60 * _NS) != 0)
    if odd.any():
        text = pc.replace_with_mask(text, pa.array(odd), pa.array(
            [x.isoformat() for x in u[odd]], pa.large_string()))
    return text


def _offset(ns: int) -> str:
    """A UTC offset as isoformat writes it (Python's own formatting of it)."""
    zone = dt.timezone(dt.timedelta(microseconds=ns // 1000))
    return dt.datetime(2000, 1, 1, tzinfo=zone).isoformat()[19:]


def _digits(x: np.ndarray, width: int) -> np.ndarray:
    """Non-negative integers below 10^width as zero-padded ASCII digits, n x width: two
    at a time from a table (a division per pair, not per digit)."""
    out = np.empty((len(x), width), np.uint8)
    for end in range(width, 1, -2):
        out[:, end - 2:end] = _PAIRS[x % 100]
        if end > 2 or width % 2:
            x = x // 100
    if width % 2:
        out[:, 0] = x % 10 + ord("0")
    return out


def _table(words: list[str], which: np.ndarray):
    """words[which] as (bytes padded to the longest, lengths; None where all alike)."""
    enc = [w.encode("utf-8") for w in words]
    mat = np.zeros((len(enc), max(map(len, enc), default=0)), np.uint8)
    for i, b in enumerate(enc):
        mat[i, :len(b)] = np.frombuffer(b, np.uint8)
    lengths = np.asarray([len(b) for b in enc], np.int64)
    return mat[which], None if len(set(lengths.tolist())) < 2 else lengths[which]


def _joined(parts: list, n: int):
    """The pieces side by side, each row's bytes past its length left out, as Arrow
    text (large_string, as pandas keeps text)."""
    import pyarrow as pa
    mat = np.hstack([p for p, _ in parts]) if parts else np.zeros((n, 0), np.uint8)
    if all(lens is None for _, lens in parts):  # every row as long
        data, offsets = mat.ravel(), np.arange(n + 1, dtype=np.int64) * mat.shape[1]
    else:
        keep = np.hstack([np.ones(p.shape, bool) if lens is None else
                          np.arange(p.shape[1]) < lens[:, None] for p, lens in parts])
        data, offsets = mat[keep], np.zeros(n + 1, np.int64)
        np.cumsum(keep.sum(axis=1), out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), n, [
        None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data))])
