"""What a GPU run would cost in kernel launches and host reads, counted on a CPU.

The CuPy backend runs with its kernels compiled by g++ and its arrays a counting
stand-in for CuPy's (cuda_emu/counting.py).  One default fit and sample of a small table
is counted per stage and per call, and each call is held to a budget that grows with the
columns and the iterations it ran, never with rows, cells or candidates (docs/gpu.md).
"""
import shutil
import warnings

import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.backends.cuda import passes as device_passes
from gpu_dpsyn.generate import gibbs, gum, polish, records
from gpu_dpsyn.generate import sample as sampling
from gpu_dpsyn.measure import errors, marginals, privsyn, rounds

# host reads per call: a column of the sweep reads once per IPF pass, plus its contexts'
# count and their total (the fitted p is drawn from on the device, never read); a column
# of the polish once per pass, plus its contexts, the move check and the records' moves
# (3 masks)
SWEEP_READS_PER_COLUMN = gibbs.IPF_ITERATIONS + 2
POLISH_READS_PER_COLUMN = 6  # besides one per pass
GUM_READS = 2  # besides one per iteration (its error, for the stop rule)
# measuring, per batch of marginals (marginals.batches: up to 2^22 cells): the histograms
# at once, and the noise's values and status (fail closed), all drawn in one launch
MEASURE_READS_PER_BATCH = 3
ERROR_READS = 3  # all the candidates' errors at once, and their noise's values and status
# a GUM iteration's errors: the zeroed counts, one multi_hist launch, the view
TARGET_ERROR_LAUNCHES = 3
ERROR_LAUNCHES = 40  # the candidates' errors: two histogram launches and the sums, noise
POLISH_LAUNCHES_PER_PASS = 20
SWEEP_LAUNCHES_PER_PASS_AND_TARGET = 4


@pytest.fixture(scope="module")
def so(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ is needed to emulate the kernels")
    from cuda_emu import emulate
    return emulate.build(tmp_path_factory.mktemp("emu"))


@pytest.fixture(scope="module")
def counted(so):
    from conftest import FLIGHTS, FLIGHTS_SCHEMA, _flights
    from cuda_emu import counting
    from gpu_dpsyn.data.schema import load_schema
    flights, flights_schema = _flights(20000), load_schema(FLIGHTS_SCHEMA)
    assert FLIGHTS.exists()
    cols = ["month", "carrier", "origin", "distance", "sched_dep_time"]
    df = flights[cols].iloc[:1000]
    schema = {"columns": {c: flights_schema[c].to_dict() for c in cols}}
    calls = []
    mp = pytest.MonkeyPatch()
    try:
        be = counting.counting_backend(mp, so)
        from gpu_dpsyn import synthesizer as api
        mp.setattr(api, "get_backend", lambda name: be)
        count = counting.reset()

        def watch(module, name, stage, info=None):
            real = getattr(module, name)

            def wrapped(*a, **k):
                before = (count.syncs[stage], count.launches[stage], passes[0])
                with count.at(stage):
                    out = real(*a, **k)
                calls.append(dict(stage=stage, syncs=count.syncs[stage] - before[0],
                                  launches=count.launches[stage] - before[1],
                                  passes=passes[0] - before[2],
                                  **(info(a, out) if info else {})))
                return out
            mp.setattr(module, name, wrapped)
        passes = [0]

        def counted_pass(real):
            def one(*a, **k):
                passes[0] += 1
                return real(*a, **k)
            return one
        mp.setattr(polish, "one_pass", counted_pass(polish.one_pass))
        mp.setattr(device_passes.DevicePass, "run", counted_pass(device_passes.DevicePass.run))
        mp.setattr(device_passes.DeviceIPF, "step", counted_pass(device_passes.DeviceIPF.step))
        mp.setattr(gibbs, "rows_normalised", counted_pass(gibbs.rows_normalised))

        def columns(a, out):  # targets (a's 3rd argument): the columns they hold
            return dict(columns=len({x for t in a[2] if len(t[0]) > 1 for x in t[0]}),
                        targets=len([t for t in a[2] if len(t[0]) > 1]))
        watch(records, "gibbs_sweep", "sweep", columns)
        watch(records, "polish", "polish", columns)
        watch(records, "run_gum", "gum", lambda a, out: dict(iterations=len(out.history)))
        watch(gum, "target_errors", "target errors", lambda a, out: dict(targets=len(a[2])))
        watch(errors, "measure_errors", "errors", lambda a, out: dict(candidates=len(a[4])))
        def plan(a, out):  # measure(backend, cols, domain, plan, ...)
            shapes = [tuple(a[2][x] for x in attrs) for attrs in a[3]]
            return dict(marginals=len(a[3]),
                        batches=len(list(marginals.batches(zip(a[3], shapes)))))
        watch(privsyn, "measure", "measure", plan)
        watch(rounds, "measure", "measure", plan)
        watch(sampling, "decode", "decode", lambda a, out: dict(columns=len(a[0])))
        watch(sampling, "device_decoded", "decode", lambda a, out: dict(columns=len(a[2])))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Synthesizer(1.0, 1e-9, seed=5, progress=False, backend="gpu").fit(df, schema) \
                .sample()
    finally:
        mp.undo()
    return calls


def _of(calls, stage):
    got = [c for c in calls if c["stage"] == stage]
    assert got, f"no {stage} call was counted"
    return got


def test_the_sweep_reads_once_a_pass_per_column(counted):
    for c in _of(counted, "sweep"):
        assert c["syncs"] <= c["columns"] * SWEEP_READS_PER_COLUMN, c
        # rows_normalised runs once a target and pass
        assert c["launches"] <= c["passes"] * SWEEP_LAUNCHES_PER_PASS_AND_TARGET + \
            200 * c["columns"], c


def test_the_polish_reads_once_a_pass(counted):
    for c in _of(counted, "polish"):
        assert c["passes"] >= c["columns"]  # at least a pass a column
        assert c["syncs"] <= c["passes"] + POLISH_READS_PER_COLUMN * c["columns"], c
        assert c["launches"] <= c["passes"] * POLISH_LAUNCHES_PER_PASS + \
            200 * c["columns"], c


def test_a_device_polish_pass_launches_the_same_whatever_its_targets(so, monkeypatch):
    # polish.cu's pass against the array code's, which grows with the targets
    import numpy as np
    from cuda_emu import counting
    be = counting.counting_backend(monkeypatch, so)
    r = np.random.default_rng(0)
    got = []
    for T in (1, 2, 6):
        U, size = 300, 5
        X = r.integers(0, 6, (U, size))
        ctx = np.stack([r.integers(0, 7, U) for _ in range(T)], 1)
        tables = [r.gamma(0.7, 4.0, (size, 7)) for _ in range(T)]
        s = [be.asarray(polish.cell_counts(X, ctx[:, i], 7)) for i in range(T)]
        args = (be.asarray(X), s, [be.asarray(t) for t in tables], be.asarray(ctx),
                be.asarray(r.permutation(U)))
        count = counting.reset()
        with count.at("array"):
            polish.one_pass_masked(*args[:2], args[3], args[2], args[4], be.xp, be)
        fused = be.polish_table(be.asarray(X), s, *args[2:], polish.BLOCK_CELLS,
                                polish.GAIN_TOLERANCE)
        with count.at("device"):
            fused.run()
        got.append((count.launches["array"], count.launches["device"]))
        assert count.syncs["device"] == 0
    assert got[0][0] < got[1][0] < got[2][0]  # the array code: more with each target
    assert len({d for _, d in got}) == 1 and got[0][1] <= POLISH_LAUNCHES_PER_PASS


def test_a_device_ipf_pass_launches_three_times_a_target(so, monkeypatch):
    # ipf.cu's pass: 3 launches a target and one for the pass's worst TVD, no read
    import numpy as np
    from cuda_emu import counting
    be = counting.counting_backend(monkeypatch, so)
    r = np.random.default_rng(1)
    for T in (1, 2, 6):
        U, size = 300, 5
        ctx = np.stack([r.integers(0, 7, U) for _ in range(T)], 1)
        tables = [r.gamma(0.7, 4.0, (size, 7)) for _ in range(T)]
        w = r.integers(1, 9, U).astype(np.float64)
        fused = be.ipf_table(be.asarray(np.full((U, size), 1 / size)), be.asarray(w),
                             be.asarray(ctx), [be.asarray(t) for t in tables],
                             [t.sum() for t in tables], 1.0, [1.0] * T)
        count = counting.reset()
        with count.at("pass"):
            fused.run()
        assert count.launches["pass"] == 3 * T + 1 and count.syncs["pass"] == 0
        assert 3 * T + 1 <= SWEEP_LAUNCHES_PER_PASS_AND_TARGET * T


def test_gum_reads_once_an_iteration(counted):
    for c in _of(counted, "gum"):
        assert c["syncs"] <= c["iterations"] + GUM_READS, c


def test_gum_histograms_its_targets_in_one_launch(counted, so, monkeypatch):
    for c in _of(counted, "target errors"):
        assert c["launches"] <= TARGET_ERROR_LAUNCHES and c["syncs"] == 1, c
    # and with more targets than the budget has launches (the fit above had 2)
    import numpy as np
    from cuda_emu import counting
    be = counting.counting_backend(monkeypatch, so)
    rng = np.random.default_rng(0)
    dom = [3, 5, 4, 7, 2]
    cols = [be.asarray(rng.integers(0, d, 400).astype(np.uint8)) for d in dom]
    sets = [(0,), (1,), (2, 3), (0, 4), (1, 2, 3), (3, 4), (0, 1, 2), (4,)]
    targets = [(a, tuple(dom[x] for x in a), np.full(int(np.prod([dom[x] for x in a])),
                                                     400 / np.prod([dom[x] for x in a])))
               for a in sets]
    count = counting.reset()
    with count.at("target errors"):
        err = gum.target_errors(be, cols, targets)
    assert count.launches["target errors"] <= TARGET_ERROR_LAUNCHES < len(targets)
    assert count.syncs["target errors"] == 1
    host = [c.view(np.ndarray) for c in cols]
    from gpu_dpsyn.backends import get_backend
    assert np.array_equal(err, gum.target_errors(get_backend("cpu"), host, targets))


def test_the_candidates_errors_are_read_at_once(counted):
    got = _of(counted, "errors")
    assert max(c["candidates"] for c in got) > 2 * ERROR_READS  # the bound means something
    for c in got:
        assert c["syncs"] <= ERROR_READS, c
        assert c["launches"] <= ERROR_LAUNCHES, c  # the histograms: one launch a table


def test_measuring_reads_per_batch_and_decoding_per_column(counted):
    got = _of(counted, "measure")
    assert max(c["marginals"] for c in got) > MEASURE_READS_PER_BATCH  # the bound bites
    for c in got:
        assert c["syncs"] <= MEASURE_READS_PER_BATCH * c["batches"], c
    for c in _of(counted, "decode"):
        assert c["syncs"] <= c["columns"], c
