"""--workload and --group-by name columns whose names hold ',' or ':' (a split at every
',' and the first ':' had made "income:usd" a column 'income' of weight 'usd'): the
schema's names are known, as --set knows them, and the JSON form takes any name; a text
that reads two ways is refused in one line that gives the JSON form."""
import pytest

from gpu_dpsyn.cli.column_sets import parse_group_by, parse_workload
from gpu_dpsyn.errors import DPSynError

NAMES = ["a", "b", "income:usd", "x,y", "c"]


@pytest.mark.parametrize("item, want", [
    ("a,b:3", (("a", "b"), 3.0)),
    ("a, b", (("a", "b"), 1.0)),
    ("income:usd", (("income:usd",), 1.0)),
    ("income:usd,a:2", (("income:usd", "a"), 2.0)),
    ("x,y,c:0.5", (("x,y", "c"), 0.5)),
    ('["x,y", "income:usd"]:4', (("x,y", "income:usd"), 4.0)),
    ('["x,y"]', (("x,y",), 1.0)),
])
def test_workload_names_with_separators(item, want):
    assert parse_workload([item], NAMES) == [want]


@pytest.mark.parametrize("item, want", [
    ("a,b", ["a", "b"]), ("x,y", ["x,y"]), ("x,y, c", ["x,y", "c"]),
    ('["x,y","a"]', ["x,y", "a"]), ("income:usd", ["income:usd"]),
])
def test_group_by_names_with_separators(item, want):
    assert parse_group_by([item], NAMES) == [want]


def test_a_name_read_two_ways_is_refused_with_the_json_form():
    names = ["a", "b", "a,b", "a:2"]
    for parse, item in ((parse_group_by, "a,b"), (parse_workload, "a,b"),
                        (parse_workload, "a:2")):
        with pytest.raises(DPSynError) as e:
            parse([item], names)
        msg = str(e.value)
        assert "\n" not in msg and "two ways" in msg and '["' in msg, msg


def test_without_names_or_unknown_names_the_plain_reading_stays():
    assert parse_workload(["a,b:3", "c"]) == [(("a", "b"), 3.0), (("c",), 1.0)]
    assert parse_workload(["zz,a:3"], NAMES) == [(("zz", "a"), 3.0)]  # check_plan names zz
    assert parse_group_by(["state", "puma,year"]) == [["state"], ["puma", "year"]]
    for bad, says in (("a:", "no weight"), ("a:x", "must be a number"),
                      ('["a"', "JSON"), ('["a", 1]', "JSON")):
        with pytest.raises(DPSynError, match=says):
            parse_workload([bad], NAMES)


def test_the_command_line_takes_such_a_name(tmp_path):
    """End to end: a workload on 'income:usd' reaches the fit as that column."""
    import json
    import numpy as np
    import pandas as pd
    from gpu_dpsyn.cli import main
    r = np.random.default_rng(0)
    pd.DataFrame({"income:usd": r.integers(0, 3, 300), "x,y": r.integers(0, 2, 300)}
                 ).to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps({"columns": {
        "income:usd": {"type": "categorical", "values": [0, 1, 2]},
        "x,y": {"type": "categorical", "values": [0, 1]}}}))
    assert main(["synthesize", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                 "--epsilon", "1", "--delta", "1e-9", "--out", str(tmp_path / "o.csv"),
                 "--rows", "20", "--iterations", "1", "--quiet", "--workload",
                 "income:usd,x,y:2", "--group-by", "x,y"]) == 0
    assert list(pd.read_csv(tmp_path / "o.csv").columns) == ["income:usd", "x,y"]
