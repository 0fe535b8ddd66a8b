"""Local times a daylight-saving change doubles (the autumn fold): read as their first
occurrence, in the data as in the synthetic table written without offsets, so a release
reads back under its own schema.  Times a change skips stay invalid."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.data.types.datetime import to_epoch
from gpu_dpsyn.errors import DataError

NY = "America/New_York"
BERLIN = "Europe/Berlin"


def _schema(zone=NY, **spec):
    spec = {"type": "datetime", "min": "2013-03-01", "max": "2013-11-30 23:59:59",
            "unit": "hour", "timezone": zone, **spec}
    return load_schema({"columns": {"d": spec}})


def _epoch_ns(text: str) -> int:
    return pd.Timestamp(text).tz_convert("UTC").as_unit("ns").value


def test_a_doubled_local_time_reads_as_its_first_occurrence():
    col = _schema()["d"]
    ns, _ = to_epoch(pd.Series(["2013-11-03 01:30", "2013-11-03 04:00"]), col)
    # 01:30 in New York on Nov 3 2013 came twice: EDT (-04:00) first, then EST (-05:00)
    assert ns.tolist() == [_epoch_ns("2013-11-03 01:30-04:00"),
                           _epoch_ns("2013-11-03 04:00-05:00")]
    # and in the local calendar's hour bins, both occurrences share the 01:00 bin
    codes = [encode(pd.DataFrame({"d": [v]}), _schema())[0][0] for v in
             ("2013-11-03 01:30", "2013-11-03 01:30-04:00", "2013-11-03 01:30-05:00")]
    assert codes[0] == codes[1] == codes[2]


def test_a_skipped_local_time_is_still_refused_and_says_so():
    with pytest.raises(DataError, match=r"'d'.*do not exist in America/New_York"):
        encode(pd.DataFrame({"d": ["2013-03-10 02:30"]}), _schema())


def test_repair_keeps_a_doubled_local_time_and_drops_a_skipped_one():
    s = _schema(format="%Y-%m-%d %H:%M")
    df = pd.DataFrame({"d": ["2013-11-03 01:30", "2013-03-10 02:30", "2013-06-01 12:00"]})
    fixed = repair(df, s)
    assert len(fixed) == 2 and fixed["d"].astype(str).str.startswith("2013-11-03").any()


def test_a_release_with_fold_times_and_a_format_reads_back_for_evaluate(tmp_path):
    """synthesize wrote local times of the fold hour without an offset, as its format
    says, and evaluate then refused its own release (they were "ambiguous")."""
    r = np.random.default_rng(0)
    start = pd.Timestamp("2023-10-28 00:00")
    wall = start + pd.to_timedelta(r.integers(0, 3 * 24 * 60, 3000), unit="min")
    pd.DataFrame({"t": wall.strftime("%Y-%m-%d %H:%M"),
                  "x": r.integers(0, 5, 3000)}).to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps({"columns": {
        "t": {"type": "datetime", "min": "2023-10-28T00:00", "max": "2023-10-30T23:59",
              "unit": "hour", "timezone": BERLIN, "format": "%Y-%m-%d %H:%M"},
        "x": {"type": "categorical", "values": [0, 1, 2, 3, 4]}}}))
    cli = [sys.executable, "-m", "gpu_dpsyn"]
    run = lambda *a: subprocess.run([*cli, *a], cwd=tmp_path, capture_output=True,
                                    text=True)
    checked = run("check", "t.csv", "--schema", "s.json")
    assert checked.returncode == 0 and "not allowed" not in checked.stdout + checked.stderr
    made = run("synthesize", "t.csv", "--schema", "s.json", "--epsilon", "4", "--delta",
               "1e-9", "--out", "o.csv", "--seed", "1")
    assert made.returncode == 0, made.stderr
    out = pd.read_csv(tmp_path / "o.csv")["t"]
    assert out.str.startswith("2023-10-29 02:").any()  # the fold hour is in the release
    scored = run("evaluate", "t.csv", "o.csv", "--schema", "s.json")
    assert scored.returncode == 0, scored.stderr


def test_a_skipped_time_in_a_format_is_not_told_to_take_an_offset():
    # the format reads no offset, so the advice could not be followed (a probe's)
    with pytest.raises(DataError) as e:
        encode(pd.DataFrame({"d": ["2013-03-10 02:30"]}), _schema(format="%Y-%m-%d %H:%M"))
    assert "do not exist in America/New_York" in str(e.value)
    assert "offset" not in str(e.value)
