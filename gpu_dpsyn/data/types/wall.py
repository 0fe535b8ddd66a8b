"""A zone's wall clock and epochs, one rule for both ways (gap.py rounds an end in local
time, time_of_day.py reads and draws a time of day): epoch nanoseconds to local wall
nanoseconds, and back with a doubled local time its first instant and a skipped one
shifted forward, as the calendar's bin edges are (datetime.py)."""
from __future__ import annotations

import numpy as np
import pandas as pd


def to_wall(x: np.ndarray, zone) -> np.ndarray:
    """Epoch nanoseconds as the zone's local wall-clock nanoseconds (None: as they are)."""
    x = np.asarray(x, dtype=np.int64)
    if zone is None:
        return x
    t = pd.DatetimeIndex(x.view("datetime64[ns]"))
    return np.asarray(t.tz_localize("UTC").tz_convert(zone).tz_localize(None).asi8,
                      dtype=np.int64)


def from_wall(wall: np.ndarray, zone) -> np.ndarray:
    """Local wall nanoseconds as epochs: a doubled time its first instant, a skipped one
    shifted forward (None: as they are)."""
    wall = np.asarray(wall, dtype=np.int64)
    if zone is None:
        return wall
    t = pd.DatetimeIndex(wall.view("datetime64[ns]"))
    return np.asarray(t.tz_localize(zone, ambiguous=np.ones(len(t), bool),
                                    nonexistent="shift_forward")
                      .tz_convert("UTC").tz_localize(None).asi8, dtype=np.int64)
