"""bench/baselines/aim.py's checkpoint: AIM at eps 8 on flights runs for many hours, so a run goes
on from the last round a killed process wrote, and must give the records of an unbroken
run.  Needs mbi (not installed in CI: skipped there)."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "baselines"


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


@pytest.mark.parametrize("eps", [0.3, 8.0])
def test_a_whole_aim_run_spends_exactly_rho(aim, eps):
    """End to end (the schedule's own test is in test_bench_mst.py): the 1-way
    marginals, every round's exponential mechanism and measurement, annealing, and the
    last round taking the rest add up to the budget."""
    from gpu_dpsyn.privacy import eps_delta_to_rho
    codes, sizes = _table()
    stats = {}
    aim.aim(codes, sizes, eps, 1e-9, seed=1, rounds=16, max_iters=20, stats=stats)
    assert stats["rho_used"] == pytest.approx(eps_delta_to_rho(eps, 1e-9), rel=1e-12)


def test_a_resumed_run_gives_the_records_of_an_unbroken_one(aim, tmp_path):
    codes, sizes = _table()
    kw = dict(seed=3, rounds=16, max_iters=40)
    whole = aim.aim(codes, sizes, 0.3, 1e-9, **kw)
    ck = tmp_path / "run.pkl"
    for _ in range(2):  # killed after its first round, twice: three processes in all
        with pytest.raises(Killed):  # (the second may have run the last round)
            aim.aim(codes, sizes, 0.3, 1e-9, checkpoint=ck, progress=_kill_after(1), **kw)
    stats = {}
    resumed = aim.aim(codes, sizes, 0.3, 1e-9, checkpoint=ck, stats=stats, **kw)
    assert stats["segments"] == 3 and stats["seconds_before"] > 0
    for col in codes:
        np.testing.assert_array_equal(resumed[col], whole[col])
    # a run that was not resumed says so
    stats = {}
    aim.aim(codes, sizes, 0.3, 1e-9, stats=stats, **kw)
    assert (stats["seconds_before"], stats["segments"]) == (0.0, 1)


RUN = """
import hashlib, os, sys
sys.path[:0] = [{bench!r}, {tests!r}]
import warnings; warnings.simplefilter("ignore")
import numpy as np
import aim
from test_bench_aim_checkpoint import _table
codes, sizes = _table()

def progress(line):
    if sys.argv[1] == "kill":
        os._exit(3)  # no cleanup: as a killed process
out = aim.aim(codes, sizes, 0.3, 1e-9, seed=5, rounds=16, max_iters=40, progress=progress,
              checkpoint=None if sys.argv[1] == "whole" else {ck!r})
print(hashlib.sha256(b"".join(np.asarray(out[c]).tobytes() for c in codes)).hexdigest())
"""


def test_a_run_killed_in_one_process_goes_on_in_another(aim, tmp_path):
    """Processes of their own (PYTHONHASHSEED fixed, as peers.py's runs): killed by
    os._exit after its first round, then resumed, the records are an unbroken run's."""
    import subprocess
    script = tmp_path / "run.py"
    script.write_text(RUN.format(bench=str(BENCH), tests=str(Path(__file__).parent),
                                 ck=str(tmp_path / "run.pkl")))
    env = dict(os.environ, PYTHONHASHSEED="0")

    def run(mode):
        return subprocess.run([sys.executable, str(script), mode], env=env,
                              capture_output=True, text=True)
    whole = run("whole")
    assert whole.returncode == 0, whole.stderr[-2000:]
    killed = run("kill")
    assert killed.returncode == 3 and (tmp_path / "run.pkl").exists(), killed.stderr[-2000:]
    resumed = run("resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert resumed.stdout.split()[-1] == whole.stdout.split()[-1]


@pytest.mark.parametrize("hash_seed", [None, "random"])
def test_a_checkpoint_needs_a_fixed_hash_seed(aim, tmp_path, monkeypatch, hash_seed):
    """Without PYTHONHASHSEED fixed, each process orders mbi's sets its own way, and a
    resumed run would not be the unbroken one: refused before anything runs."""
    codes, sizes = _table()
    if hash_seed is None:
        monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    else:
        monkeypatch.setenv("PYTHONHASHSEED", hash_seed)
    with pytest.raises(ValueError, match="needs PYTHONHASHSEED fixed"):
        aim.aim(codes, sizes, 0.3, 1e-9, checkpoint=tmp_path / "run.pkl")
    assert not (tmp_path / "run.pkl").exists()


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
