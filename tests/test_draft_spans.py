"""A number that is the time between two dates of its record (a length of stay in days
beside admission and discharge, a trip's minutes beside pickup and drop-off) is said on
its draft line: no column type derives it, and measured apart from the dates the
synthetic rows break it (a hospital table at eps 1: los_days matched its discharge less
its admission, in calendar days, on 8% of the synthetic rows)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from conftest import drafted


def _stays(n=3000, seed=0):
    r = np.random.default_rng(seed)
    admit = pd.Timestamp("2023-01-01") + pd.to_timedelta(r.integers(0, 700 * 1440, n), "min")
    disc = admit + pd.to_timedelta(r.lognormal(np.log(70), 0.9, n).round(), "h")
    return pd.DataFrame({
        "admit": admit.strftime("%Y-%m-%d %H:%M"), "discharge": disc.strftime("%Y-%m-%d %H:%M"),
        "los_days": (disc.normalize() - admit.normalize()).days,
        "los_hours": ((disc - admit) / pd.Timedelta(1, "h")).round(1),
        "age": r.integers(0, 95, n), "ward": r.choice(["A", "B", "C"], n)})


def test_a_length_of_stay_beside_its_dates_is_said_with_the_edit_leaving_it_out():
    lines = drafted(_stays())[1]
    for name, unit in (("los_days", "days"), ("los_hours", "hours")):
        line = lines[name]
        assert f"the {unit} from 'admit' to 'discharge' in every record" in line, line
        assert f"--drop {name} --ignore {name}" in line, line
    assert "from 'admit'" not in lines["age"]


def test_a_number_off_by_more_than_its_rounding_is_not_said():
    df = _stays()
    df["los_days"] = df["los_days"] + np.random.default_rng(1).integers(0, 3, len(df))
    assert "from 'admit'" not in drafted(df)[1]["los_days"]
