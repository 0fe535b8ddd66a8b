"""Where a CSV record ends: at "\\n" or "\\r\\n", never at a lone "\\r".

pandas' parser (like Arrow's and the csv module) also ends a record at a lone carriage
return.  One record written with a stray "\\r" in an unquoted field would then count as
two: one person would weigh twice in every marginal (twice the sensitivity the noise is
scaled to), and the record's second half would land in the wrong columns.  So a CSV is
read with "\\n" as its one line end, through a stream that turns "\\r\\n" into "\\n"; a
lone "\\r" stays in its field, where the schema check meets it like any other text.  The
one exception is decided by the header alone (public): a file whose header ends in a lone
"\\r" (old Mac text) has no other line end, and is read as pandas reads it.  Inside a
quoted field, "\\r\\n" reads as "\\n".

Our own stream (not a library's): pandas has no option for it, and "\\r\\n" -> "\\n" on
the bytes is exact in UTF-8 and its ASCII supersets, where neither byte occurs inside a
multi-byte character.
"""
from __future__ import annotations

import io
import re

import pandas as pd

_CHUNK = 1 << 16

# a file's first bytes that no CSV header starts with: what the file is, and how a
# table of it is named; read off the header alone, so naming it says nothing of a record
_PACKED = [(b"\x1f\x8b", "gzip-compressed", "name it .csv.gz"),
           (b"\xfd7zXZ\x00", "xz-compressed", "name it .csv.xz"),
           (b"BZh[1-9]1AY&SY", "bzip2-compressed", "name it .csv.bz2"),
           (b"PK\x03\x04", "a ZIP archive", "name a zipped CSV .csv.zip (an Excel .xlsx "
            "workbook is one too: save its sheet as CSV)"),
           (rb"\(\xb5/\xfd", "zstd-compressed", "decompress it first"),
           (b"\xd0\xcf\x11\xe0", "an Excel .xls workbook", "save its sheet as CSV"),
           (b"PAR1[\x00-\x08\x0b\x0c\x0e-\x1f]", "a Parquet file", "name it .parquet")]


class LineEnds(io.RawIOBase):
    """A binary stream's bytes with every "\\r\\n" turned into "\\n", and a "\\r" that
    ends the stream into "\\n" (nothing follows it: a line end whose "\\n" was lost).
    `lone_cr`: the first "\\r" or "\\n" of the stream (the header's line end, unless a
    quoted header name holds one) is a lone "\\r", decided on opening; the stream then
    passes its bytes through unchanged."""

    def __init__(self, raw):
        super().__init__()
        self._raw, self._out, self._done = raw, b"", False
        parts, seen, end = [], 0, -1
        while True:  # up to the first line end and a byte past it: each chunk searched once
            more = raw.read(_CHUNK)
            self._done = not more
            parts.append(more)
            if end < 0:
                found = [i for i in (more.find(b"\r"), more.find(b"\n")) if i >= 0]
                end = seen + min(found) if found else -1
            seen += len(more)
            if self._done or (end >= 0 and end + 1 < seen):
                break
        self._held = b"".join(parts)
        self.lone_cr = end >= 0 and self._held[end:end + 1] == b"\r" and \
            self._held[end:end + 2] != b"\r\n"

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        want = len(buffer)
        while len(self._out) < want and (self._held or not self._done):
            if not self._done:
                more = self._raw.read(max(want, _CHUNK))
                self._done, self._held = not more, self._held + more
            if self.lone_cr:
                self._out, self._held = self._out + self._held, b""
                continue
            # a "\r" at the end may start a "\r\n": held until the next byte is known
            cut = len(self._held) - (self._held.endswith(b"\r") and not self._done)
            text = self._held[:cut].replace(b"\r\n", b"\n")
            if self._done and text.endswith(b"\r"):
                text = text[:-1] + b"\n"
            self._out, self._held = self._out + text, self._held[cut:]
        out, self._out = self._out[:want], self._out[want:]
        buffer[:len(out)] = out
        return len(out)


def read_csv(source, **opts) -> pd.DataFrame:
    """pd.read_csv(source, **opts) with records ended as this module says; source: a path
    or URL (decompressed as pandas infers from its name) or a binary stream."""
    from pandas.io.common import get_handle  # pandas' own opener: its compressions, fsspec
    compression = opts.pop("compression", "infer")
    with get_handle(source, "rb", compression=compression, is_text=False) as handles:
        stream = LineEnds(handles.handle)
        if stream._held.startswith((b"\xff\xfe", b"\xfe\xff")):  # (UTF-32's too)
            raise ValueError("the file is UTF-16 or UTF-32 text (its first bytes say so): "
                             "save it as UTF-8, or in an 8-bit encoding named under \"csv\" "
                             "in the schema")
        for magic, what, fix in _PACKED:
            if re.match(magic, stream._held):
                raise ValueError(f"the file is {what} (its first bytes say so), not CSV text: "
                                 f"{fix}")
        first = stream._held.split(b"\n", 1)[0].rstrip(b"\r").removeprefix(b"\xef\xbb\xbf")
        if len(first) == 5 and first.startswith(b"sep="):  # Excel's line: a line, no header
            raise ValueError(f"its first line {first.decode('latin-1')!r} is Excel's "
                             "separator line: remove it (the schema's \"csv\" names the "
                             "separator)")
        if not stream.lone_cr:
            opts["lineterminator"] = "\n"
        return pd.read_csv(io.BufferedReader(stream, _CHUNK), **opts)
