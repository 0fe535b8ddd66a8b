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

import pandas as pd

_CHUNK = 1 << 16


class LineEnds(io.RawIOBase):
    """A binary stream's bytes with every "\\r\\n" turned into "\\n".  `lone_cr`: the
    header (the bytes before the first line end) ends in a lone "\\r", decided on opening;
    the stream then passes its bytes through unchanged."""

    def __init__(self, raw):
        super().__init__()
        self._raw, self._held, self._out, self._done = raw, b"", b"", False
        end = -1
        while end < 0 or end + 1 >= len(self._held):  # the header's line end, and a byte
            more = raw.read(_CHUNK)                     # past it
            self._held += more
            self._done = not more
            end = min((i for i in (self._held.find(b"\r"), self._held.find(b"\n"))
                       if i >= 0), default=-1)
            if self._done:
                break
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
            self._out += self._held[:cut].replace(b"\r\n", b"\n")
            self._held = self._held[cut:]
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
        if not stream.lone_cr:
            opts["lineterminator"] = "\n"
        return pd.read_csv(io.BufferedReader(stream, _CHUNK), **opts)
