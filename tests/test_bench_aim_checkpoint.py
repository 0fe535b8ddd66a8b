"""bench/aim.py's checkpoint: AIM at eps 8 on flights runs for many hours, so a run goes
on from the last round a killed process wrote, and must give the records of an unbroken
run.  Needs mbi (not installed in CI: skipped there)."""
import os
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture
def aim(monkeypatch):
    pytest.importorskip("mbi")
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setenv("PYTHONHASHSEED", os.environ.get("PYTHONHASHSEED", "0"))
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_aim_ck", BENCH / "aim.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _table(seed=0, n=3000):
    r = np.random.default_rng(seed)
    a = r.integers(0, 3, n)
    b = (a + r.integers(0, 2, n)) % 4
    c = (b + r.integers(0, 2, n)) % 5
    d = r.integers(0, 2, n)
    return {"a": a, "b": b, "c": c, "d": d}, {"a": 3, "b": 4, "c": 5, "d": 2}


class Killed(Exception):
    pass


def _kill_after(k):
    seen = []

    def progress(line):
        seen.append(line)
        if len(seen) == k:
            raise Killed(line)
    return progress


def test_a_resumed_run_gives_the_records_of_an_unbroken_one(aim, tmp_path):
    codes, sizes = _table()
    kw = dict(seed=3, rounds=12, max_iters=40)
    whole = aim.aim(codes, sizes, 0.3, 1e-9, **kw)
    ck = tmp_path / "run.pkl"
    with pytest.raises(Killed):
        aim.aim(codes, sizes, 0.3, 1e-9, checkpoint=ck, progress=_kill_after(2), **kw)
    with pytest.raises(Killed):  # the second process dies too: three segments in all
        aim.aim(codes, sizes, 0.3, 1e-9, checkpoint=ck, progress=_kill_after(1), **kw)
    stats = {}
    resumed = aim.aim(codes, sizes, 0.3, 1e-9, checkpoint=ck, stats=stats, **kw)
    assert stats["segments"] == 3 and stats["seconds_before"] > 0
    for col in codes:
        np.testing.assert_array_equal(resumed[col], whole[col])
    # a run that was not resumed says so
    stats = {}
    aim.aim(codes, sizes, 0.3, 1e-9, stats=stats, **kw)
    assert stats == {"seconds_before": 0.0, "segments": 1}


def test_a_checkpoint_of_another_run_is_refused(aim, tmp_path):
    codes, sizes = _table()
    ck = tmp_path / "run.pkl"
    with pytest.raises(Killed):
        aim.aim(codes, sizes, 0.3, 1e-9, seed=3, rounds=12, max_iters=20, checkpoint=ck,
                progress=_kill_after(1))
    other = dict(codes, d=1 - codes["d"])
    for args, kw in [((codes, sizes, 0.3, 1e-9), dict(seed=4)),  # another seed
                     ((codes, sizes, 1.0, 1e-9), dict(seed=3)),  # another epsilon
                     ((other, sizes, 0.3, 1e-9), dict(seed=3))]:  # another table
        with pytest.raises(ValueError, match="another run's checkpoint"):
            aim.aim(*args, rounds=12, max_iters=20, checkpoint=ck, **kw)


def test_fingerprint_reads_the_codes_and_the_hash_seed(aim, monkeypatch):
    codes, sizes = _table()
    f = aim.fingerprint(codes, sizes, 1.0)
    assert f == aim.fingerprint({k: v.copy() for k, v in codes.items()}, sizes, 1.0)
    changed = dict(codes, a=codes["a"].copy())
    changed["a"][0] = (changed["a"][0] + 1) % 3
    assert aim.fingerprint(changed, sizes, 1.0) != f
    assert aim.fingerprint(codes, sizes, 2.0) != f
    monkeypatch.setenv("PYTHONHASHSEED", "12345")
    assert aim.fingerprint(codes, sizes, 1.0) != f
