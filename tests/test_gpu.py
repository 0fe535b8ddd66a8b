"""The CUDA backend: sources compile without a GPU; with one, results equal the NumPy
fallback's exactly for the same seed."""
import shutil
from pathlib import Path
import subprocess

import numpy as np
import pandas as pd
import pytest

from conftest import gpu, xyz_table
from cuda_emu.emulate import set_everywhere
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.backends.arrays import plan_update, removal_rate
from gpu_dpsyn.errors import BackendError, SamplerError
from gpu_dpsyn.backends.cuda import launch, ops as kops
from gpu_dpsyn.privacy.drawing import draw
from gpu_dpsyn.privacy.samplers import (FAIL, MAX_WORDS, OK, WIDE, DiscreteGaussian,
    DiscreteLaplace)

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if shutil.which("/usr/local/cuda/bin/nvcc") else None)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("source", launch.SOURCES)
def test_cuda_source_compiles_with_nvcc(source, tmp_path):
    r = subprocess.run([NVCC, "-ptx", "-arch=compute_90", *launch.NVCC_OPTIONS,
                        f"-I{launch.KERNEL_DIR}", str(launch.KERNEL_DIR / source), "-o",
                        str(tmp_path / "out.ptx")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ptx = (tmp_path / "out.ptx").read_text()
    assert ".entry" in ptx


def _libnvrtc():
    """libnvrtc from the nvidia-cuda-nvrtc wheel (runs without a GPU), if installed."""
    import ctypes
    import importlib.util
    try:
        spec = importlib.util.find_spec("nvidia.cuda_nvrtc")
    except ModuleNotFoundError:  # no nvidia namespace at all
        return None
    if spec is None:
        return None
    libs = sorted(Path(list(spec.submodule_search_locations)[0], "lib").glob("libnvrtc.so*"))
    return ctypes.CDLL(str(libs[0])) if libs else None


@pytest.mark.parametrize("arch", ["compute_90", "compute_60"])
@pytest.mark.parametrize("source", launch.SOURCES)
def test_cuda_source_compiles_with_nvrtc_as_cupy_would(source, arch):
    # CuPy compiles with NVRTC, which differs from nvcc (e.g. 128-bit integers need
    # --device-int128): compile with exactly load_cuda_module's options, for a Hopper and
    # for a Pascal (no __match_any_sync: order.cu's kernel is compiled without it there)
    import ctypes
    lib = _libnvrtc()
    if lib is None:
        pytest.skip("the nvidia-cuda-nvrtc wheel is not installed")
    path = launch.KERNEL_DIR / source
    code = f'#line 1 "{path.as_posix()}"\n' + path.read_text()
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), source.encode(), 0, None,
                                  None) == 0
    opts = [*launch.NVRTC_OPTIONS, f"-I{launch.KERNEL_DIR.as_posix()}", f"-arch={arch}"]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    assert rc == 0, log.value.decode()


def test_kernel_module_imports_without_a_device():
    # importing the glue must not need a GPU (or CuPy at all)
    assert callable(launch.load_cuda_module) and kops.CupyBackend.name == "gpu"




@pytest.fixture(scope="session")
def emu_so(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ is needed to emulate the kernels")
    from cuda_emu.emulate import build
    return build(tmp_path_factory.mktemp("emu"))


@pytest.fixture(params=["emulated", "blocks", "counted",
                        pytest.param("device", marks=[pytest.mark.gpu, gpu])])
def gb(request, monkeypatch):
    """The CuPy backend: on the device, or its kernels compiled by g++ and run on the CPU;
    "counted" with the CuPy stand-in's arrays, which CuPy's functions tell from host ones."""
    if request.param == "device":
        return get_backend("gpu")
    if request.param == "counted":
        from cuda_emu.counting import counting_backend
        return counting_backend(monkeypatch, request.getfixturevalue("emu_so"))
    from cuda_emu.emulate import emulated_backend
    return emulated_backend(monkeypatch, request.getfixturevalue("emu_so"),
                            32 if request.param == "blocks" else None)




def test_philox_known_answer(gb):
    w = gb.to_numpy(gb.philox((0, 0), 1))[0]
    assert [hex(int(x)) for x in w] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]
    from gpu_dpsyn.core.philox import philox4x32
    many = gb.to_numpy(gb.philox((5, 6), 1000, 0, 3, 2, 1))
    cpu = np.stack(philox4x32((5, 6), np.arange(1000, dtype=np.uint64), 3, 2, 1), 1)
    assert np.array_equal(many, cpu)


KEY = (0x03020100, 0x07060504, 0x0B0A0908, 0x0F0E0D0C, 0x13121110, 0x17161514, 0x1B1A1918,
       0x1F1E1D1C)  # RFC 8439's 00:01:...:1f


def test_chacha20_known_answer_and_layout(gb):
    from gpu_dpsyn.privacy.chacha import block_ref, keystream
    rfc = gb.to_numpy(gb.chacha_blocks(KEY, 1, 1, (0x09000000, 0x4A000000, 0)))[0]
    assert rfc[:4].tolist() == [0xE4E7F110, 0x15593BD1, 0x1FDD0F50, 0xC47120A3]  # 2.3.2
    assert rfc.tolist() == block_ref(KEY, 1, (0x09000000, 0x4A000000, 0))
    many = gb.to_numpy(gb.chacha_blocks(KEY, 7, 300, (5, 1, 9)))
    assert np.array_equal(many, keystream(KEY, 7, 300, (5, 1, 9)))


NOISE_SPECS = [DiscreteGaussian.at_least(0.49), DiscreteGaussian.at_least(38.9 ** 2),
               DiscreteGaussian.at_least(2.0 ** 62),  # WIDE elements: |Y| q t - p >= 2^64
               DiscreteLaplace.at_least(12.0), DiscreteLaplace.at_least(0.3)]


@pytest.mark.parametrize("spec", NOISE_SPECS, ids=str)
def test_noise_equals_cpu(gb, spec):
    cv, cs = get_backend("cpu").noise_draws([(spec, 3000, 7)], KEY, 1, MAX_WORDS)
    gv, gs = (gb.to_numpy(x) for x in gb.noise_draws([(spec, 3000, 7)], KEY, 1, MAX_WORDS))
    assert np.array_equal(gs, cs) and np.array_equal(gv[cs == OK], cv[cs == OK])
    if spec.p == 2 ** 62 if isinstance(spec, DiscreteGaussian) else False:
        assert (cs == WIDE).sum() >= 5  # the hand-back path is exercised
    assert np.array_equal(draw(gb, spec, 3000, KEY, 1, 7), draw(get_backend("cpu"), spec,
                                                                3000, KEY, 1, 7))


def test_many_draws_in_one_launch_are_each_draw_alone(gb):
    """noise_draws' segments: each draw (its own spec, size and call, both samplers, a
    WIDE one and an empty one among them) gives what it gives alone, on the device as
    on the host, and the NumPy samplers' values."""
    from gpu_dpsyn.backends.numpy import noise as numpy_noise
    draws = list(zip(NOISE_SPECS + NOISE_SPECS[:1], (300, 0, 400, 257, 40, 513),
                     (9, 2, 4, 3, 0, 8)))
    gv, gs = (gb.to_numpy(x) for x in gb.noise_draws(draws, KEY, 5, MAX_WORDS))
    cv, cs = get_backend("cpu").noise_draws(draws, KEY, 5, MAX_WORDS)
    assert np.array_equal(gs, cs) and np.array_equal(gv[cs == OK], cv[cs == OK])
    ends = np.cumsum([n for _, n, _ in draws])
    for (spec, n, call), v, st in zip(draws, np.split(gv, ends[:-1]), np.split(gs, ends[:-1])):
        nv, nst = numpy_noise.sample(spec, n, KEY, 5, call, MAX_WORDS)
        assert np.array_equal(st, nst) and np.array_equal(v[st == OK], nv[st == OK])
    assert len(gv) == ends[-1] and (cs == OK).sum() > 1000 and (cs == WIDE).sum() > 0


def test_noise_fails_closed_on_both_backends(gb):
    spec = DiscreteGaussian.at_least(9.0)
    for be in (gb, get_backend("cpu")):
        st = be.to_numpy(be.noise_draws([(spec, 2000, 0)], KEY, 1, 64)[1])
        assert (st == FAIL).sum() > 0  # some elements need more than 64 words
        with pytest.raises(SamplerError, match="nothing was released"):
            draw(be, spec, 2000, KEY, 1, 0, max_words=64)


@pytest.mark.parametrize("attrs", [(2,), (2, 4), (0, 1, 11), (9, 11)])
def test_histogram_equals_cpu(gb, flights, flights_schema, attrs):
    cb = get_backend("cpu")
    codes = encode(flights.iloc[:3000], flights_schema)
    shape = tuple(flights_schema.domain[a] for a in attrs)
    c_cell, c_hist = cb.cell_histogram(codes, attrs, shape)
    g_cell, g_hist = gb.cell_histogram([gb.asarray(c) for c in codes], attrs, shape)
    assert np.array_equal(gb.to_numpy(g_hist), c_hist)
    assert np.array_equal(gb.to_numpy(g_cell), c_cell.astype(np.int64))
    assert np.array_equal(gb.to_numpy(gb.histogram([gb.asarray(c) for c in codes], attrs, shape)),
                          c_hist)


def test_global_atomics_histogram_equals_cpu(gb, flights, flights_schema, monkeypatch):
    set_everywhere(monkeypatch, "SHARED_CELLS", 0)  # force the large-domain kernel
    codes = encode(flights.iloc[:2000], flights_schema)
    attrs = (1, 11)
    shape = tuple(flights_schema.domain[a] for a in attrs)
    g = gb.cell_histogram([gb.asarray(c) for c in codes], attrs, shape)[1]
    assert np.array_equal(gb.to_numpy(g), get_backend("cpu").histogram(codes, attrs, shape))


def test_a_cache_cleared_by_another_thread_costs_a_rebuild_not_a_key_error(gb, monkeypatch):
    """The device tables are cached per backend, which a Dask worker's threads share:
    one clearing the cache between another's store and read must not fail that read."""
    class Forgetful(dict):
        def __setitem__(self, key, value):  # stored, then cleared by "another thread"
            super().__setitem__(key, value)
            self.clear()
    monkeypatch.setattr(gb, "_tables", Forgetful())
    cols = [gb.asarray(np.arange(10, dtype=np.uint8) % 3), gb.asarray(np.ones(10, np.uint8))]
    got = gb.to_numpy(gb.histograms(cols, [((0,), (3,)), ((0, 1), (3, 2))]))
    assert got.tolist() == [4, 3, 3, 0, 4, 0, 3, 0, 3]


@pytest.mark.parametrize("shared_cells", [launch.SHARED_CELLS, 700, 0])
def test_many_histograms_in_one_launch_equal_cpu(gb, flights, flights_schema, monkeypatch,
                                                 shared_cells):
    """multi_hist: marginals grouped in shared memory, one too large counted alone in
    global memory (700: a few of each; 0: all global), of 1-3 columns of every code
    width -- the CPU's histograms end to end, from one kernel launch."""
    set_everywhere(monkeypatch, "SHARED_CELLS", shared_cells)
    codes = encode(flights.iloc[:1500], flights_schema)
    dom = flights_schema.domain
    sets = [(2,), (2, 4), (0, 1, 11), (9, 11), (4,), (11, 2), (1, 3), (0,), (4, 2, 9)]
    specs = [(a, tuple(dom[x] for x in a)) for a in sets]
    launches = []
    real = launch.kernel
    set_everywhere(monkeypatch, "kernel", lambda m, n: launches.append(n) or real(m, n))
    got = gb.to_numpy(gb.histograms([gb.asarray(c) for c in codes], specs))
    assert launches == ["multi_hist"]
    cb = get_backend("cpu")
    want = np.concatenate([cb.histogram(codes, a, sh) for a, sh in specs])
    assert np.array_equal(got, want)
    assert np.array_equal(cb.histograms(codes, specs), want)
    assert gb.to_numpy(gb.histograms([gb.asarray(c) for c in codes], [])).size == 0


@pytest.mark.parametrize("cells", [1, 200, 5000, 70_000])
@pytest.mark.parametrize("path", ["counting", "keys", "argsort"])
def test_the_cell_order_is_cell_then_index(gb, monkeypatch, cells, path):
    """updates.cell_order, every way: a stable counting sort by tiles (order.cu) up to
    the cells a block's shared memory holds; past them (or with COUNTING_SORT off) 32-bit
    (cell, index) keys, and past those a stable argsort of the cell codes in uint8, uint16
    or uint32 (forced here by KEY32_BITS 0)."""
    from gpu_dpsyn.backends.cuda import updates
    monkeypatch.setattr(updates, "COUNTING_SORT", path == "counting")
    monkeypatch.setattr(updates, "KEY32_BITS", 0 if path == "argsort" else 32)
    n = 3000
    cell = np.random.default_rng(cells).integers(0, cells, n).astype(np.int32)
    cell[:50] = cells - 1  # the top code, and runs of one cell
    cell[n // 2:n // 2 + 40] = 0
    order, idx_bits, suffix = updates.cell_order(gb.asarray(cell), cells, gb._sm)
    got = gb.to_numpy(order) & ((1 << idx_bits) - 1)
    assert np.array_equal(got, np.argsort(cell, kind="stable"))
    counting = path == "counting" and cells + updates.ORDER_THREADS <= launch.SHARED_CELLS
    want = ("32", 31) if counting else ("", 63) if path == "argsort" else ("32", 12)
    assert (suffix, idx_bits) == want


@pytest.mark.parametrize("path", ["counting", "keys", "argsort"])
def test_init_and_gum_update_equal_cpu(gb, flights, flights_schema, monkeypatch, path):
    """Every cell order (updates.cell_order): the counting sort's uint32 indices, 32-bit
    keys, and the argsort read by the 64-bit kernels (KEY32_BITS 0)."""
    from gpu_dpsyn.backends.cuda import updates
    monkeypatch.setattr(updates, "COUNTING_SORT", path == "counting")
    monkeypatch.setattr(updates, "KEY32_BITS", 0 if path == "argsort" else 32)
    cb = get_backend("cpu")
    rows = flights.iloc[:3000]
    codes = encode(rows, flights_schema)
    counts = [np.bincount(c, minlength=d) for c, d in zip(codes, flights_schema.domain)]
    c_cols = cb.init_records(counts, (9, 9), 2)
    g_cols = gb.init_records(counts, (9, 9), 2)
    assert all(np.array_equal(gb.to_numpy(g), c) for g, c in zip(g_cols, c_cols))
    attrs, shape = (8, 11), (flights_schema.domain[8], flights_schema.domain[11])
    _, real = cb.cell_histogram(codes, attrs, shape)
    err0 = np.abs(cb.histogram(c_cols, attrs, shape) - real).sum()
    for it, dup in enumerate([0.0, 0.5, 1.0]):
        c_cell, c_s = cb.cell_histogram(c_cols, attrs, shape)
        add, rem = plan_update(np, c_s, real.astype(float), 1.0)
        g_cell, g_s = gb.cell_histogram(g_cols, attrs, shape)
        g_add, g_rem = gb.plan_update(g_s, gb.asarray(real.astype(float)), 1.0)
        assert np.array_equal(gb.to_numpy(g_add), add) and np.array_equal(gb.to_numpy(g_rem), rem)
        if it == 1:  # counts from elsewhere: the prefix sums come from gum_prep instead
            g_add, g_rem = gb.asarray(add), gb.asarray(rem)
        cb.gum_apply(c_cols, attrs, shape, c_cell, c_s, add, rem, dup, (1, 2), it, 0)
        gb.gum_apply(g_cols, attrs, shape, g_cell, g_s, g_add, g_rem, dup, (1, 2), it, 0)
        assert all(np.array_equal(gb.to_numpy(g), c) for g, c in zip(g_cols, c_cols))
    # and the updates did their job
    assert np.abs(cb.histogram(c_cols, attrs, shape) - real).sum() < 0.5 * err0


def _plan_cases():
    r = np.random.default_rng(11)
    cases = []
    for n, alpha in [(1, 1.0), (7, 0.3), (300, 1.0), (3255, 0.84), (5000, 2.0)]:
        s = r.poisson(r.choice([0.5, 4.0, 40.0]), n)
        s[r.random(n) < 0.2] = 0  # empty cells: added to at rate alpha * t
        t = r.gamma(0.7, s.mean() + 1, n)
        t *= s.sum() / max(t.sum(), 1e-9)
        cases.append((s, t, alpha))
    s = np.full(64, 10)  # equal fractions everywhere: ties broken by index
    cases.append((s, np.tile([7.5, 12.5], 32).astype(float), 1.0))
    cases.append((np.full(16, 5), np.full(16, 5.0), 1.0))  # nothing to do
    cases.append((np.array([100, 0, 0, 0]), np.array([25.0, 25.0, 25.0, 25.0]), 0.01))
    return cases


@pytest.mark.parametrize("case", range(len(_plan_cases())))
def test_fused_plan_equals_cpu(gb, case):
    # the one-block plan kernel computes gum.plan_update's add and rem bit for bit
    s, t, alpha = _plan_cases()[case]
    add, rem = plan_update(np, s.astype(np.int64), t, alpha)
    g_add, g_rem = gb.plan_update(gb.asarray(s, dtype=np.int64), gb.asarray(t), alpha)
    assert np.array_equal(gb.to_numpy(g_add), add)
    assert np.array_equal(gb.to_numpy(g_rem), rem)
    assert add.sum() == rem.sum() and (rem <= s).all()
    if gb.to_numpy(g_add).size <= launch.PLAN_MAX_CELLS:  # the bisection's rate, to the bit
        sf = s.astype(np.float64)
        over = np.where(t - sf < 0, sf - t, 0.0)
        beta = removal_rate(np, over, sf, float(add.sum()))
        assert float(gb.to_numpy(gb.last_beta)[0]) == float(beta)


def test_large_plans_fall_back_to_array_code(gb, monkeypatch):
    set_everywhere(monkeypatch, "PLAN_MAX_CELLS", 8)
    s, t, alpha = _plan_cases()[2]
    add, rem = gb.plan_update(gb.asarray(s, dtype=np.int64), gb.asarray(t), alpha)
    c_add, c_rem = plan_update(np, s.astype(np.int64), t, alpha)
    assert np.array_equal(gb.to_numpy(add), c_add) and np.array_equal(gb.to_numpy(rem), c_rem)


@pytest.mark.parametrize("bad", ["int64", "float32", "strided"])
def test_kernels_refuse_columns_they_would_misread(gb, bad):
    # the kernels read 8-, 16- or 32-bit contiguous codes: an int64 column was read as
    # its low and high words (the H100 found it), silently wrong histograms
    r = np.random.default_rng(0)
    good = gb.asarray(r.integers(0, 4, 1000).astype(np.int32))
    other = r.integers(0, 5, 2000 if bad == "strided" else 1000)
    other = gb.asarray(other.astype(np.int32))[::2] if bad == "strided" else \
        gb.asarray(other.astype(bad))
    with pytest.raises(BackendError, match="column"):
        gb.cell_histogram([good, other], (0, 1), (4, 5))
    with pytest.raises(BackendError, match="column"):
        gb._table([good, other])


@pytest.mark.parametrize("size", [1, 2, 7, 300])
def test_row_cdfs_and_draws_equal_cpu(gb, size):
    # draw.cu's CDFs, bit for bit: rows with zeros, a row of none, sums past 1 by
    # rounding; and the draws from them, at row numbers where r + u rounds (past 2^20)
    from gpu_dpsyn.generate.gum import draw_rows
    cb = get_backend("cpu")
    r = np.random.default_rng(size)
    R = 500
    cond = r.gamma(0.3, 1.0, (R, size)) * (r.random((R, size)) < 0.6)
    cond[1] = 0.0  # no positive value: the last is size - 1, as NumPy's argmax gives
    cond /= np.where(cond.sum(1, keepdims=True) > 0, cond.sum(1, keepdims=True), 1.0)
    cond[0] = 1.0 / 3.0  # sums past 1 where size > 3 (row 0: nothing added hides it)
    flat, last = cb.cdf_rows(cond)
    g_flat, g_last = gb.cdf_rows(gb.asarray(cond))
    assert gb.to_numpy(g_flat).tobytes() == flat.tobytes()
    assert np.array_equal(gb.to_numpy(g_last), last)
    row = r.integers(0, R, 4000)
    u = r.random(4000)
    assert np.array_equal(gb.to_numpy(draw_rows(gb, gb.asarray(cond), gb.asarray(row),
                                                 gb.asarray(u))), draw_rows(cb, cond, row, u))
    if size > 7:
        return
    big = np.tile(cond[:4], ((1 << 21) // 4 + 1, 1))  # rows past 2^20: r + u rounds
    row = np.arange(len(big) - 300, len(big))
    u = np.full(300, 1.0 - 2.0 ** -40)
    assert np.array_equal(gb.to_numpy(draw_rows(gb, gb.asarray(big), gb.asarray(row),
                                                gb.asarray(u))), draw_rows(cb, big, row, u))


def test_best_moves_equal_cpu(gb):
    # moves.cu on the device against the NumPy array code: ties, absent values, rows
    # with one value or none present
    from gpu_dpsyn.generate import moves
    r = np.random.default_rng(6)
    from conftest import moves_case
    for _ in range(40):
        X, g, ctx = moves_case(r, 200, 2, 12, 8)
        want = moves.best_moves(X, moves.record_gains(g, ctx))
        tables = moves.gain_tables(g)
        got = gb.best_moves(gb.asarray(X.astype(np.int64)),
                            gb.asarray(np.concatenate([t.reshape(-1) for t in tables])),
                            np.cumsum([0] + [t.size for t in tables[:-1]]),
                            gb.asarray(ctx.astype(np.int64)))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(gb.to_numpy(a), b)


def test_device_passes_refuse_tables_they_would_misread(gb):
    # the kernels move X and p in place through raw pointers
    from gpu_dpsyn.errors import BackendError
    X, t, ctx = np.ones((4, 3), np.int64), np.ones((3, 2)), np.zeros((4, 1), np.int64)
    s, rank = [gb.asarray(t)], gb.asarray(np.arange(4))
    with pytest.raises(BackendError, match="polish's table must be a C-contiguous 2-d int64"):
        gb.polish_table(gb.asarray(X.astype(np.int32)), s, [gb.asarray(t)], gb.asarray(ctx),
                        rank, 1 << 20, 1e-9)
    p = gb.asarray(np.full((4, 3), 1 / 3))
    with pytest.raises(BackendError, match="IPF's p must be a C-contiguous 2-d float64"):
        gb.ipf_table(p.T.copy().T, gb.asarray(np.ones(4)), gb.asarray(ctx), s, [6.0], 1.0,
                     [1.0])
    gb.ipf_table(p, gb.asarray(np.ones(4)), gb.asarray(ctx), s, [6.0], 1.0, [1.0]).run()


def test_ipf_passes_equal_cpu(gb):
    # ipf.cu's passes (backends/cuda/passes.py) against the NumPy fit (the host build's
    # and the array code's): the same p to the bit, at each number of passes; zero
    # targets, contexts sharing cells, odd and even value counts, one value
    from gpu_dpsyn.generate import gibbs
    from test_polish import random_instance
    r = np.random.default_rng(13)
    for case in range(30):
        X, ctx, tables = random_instance(r)
        if case % 5 == 0:
            tables = [t[:1] for t in tables]  # one value
        size = tables[0].shape[0]
        w = X.sum(axis=1).astype(np.float64)
        if case % 5 == 1:  # many values: a deep tree of row sums
            size = 37
            tables = [r.gamma(0.7, 4.0, (size, t.shape[1])) for t in tables]
        for passes in (1, 2, 7):
            want = gibbs.fit_conditional(ctx, w, tables, size, passes)
            got = gibbs.fit_conditional(ctx, w, tables, size, passes, xp=gb.xp, backend=gb)
            np.testing.assert_array_equal(gb.to_numpy(got), want)


def test_each_ipf_pass_reads_the_worst_tvd_of_the_array_code(gb):
    # the one read a pass (ipf_ratio's gaps, summed per thread, per warp in blocks of
    # whole warps, then per target) against the array code's TVDs, pass by pass: the
    # sweep's stopping rule compares them with its tolerance
    from gpu_dpsyn.generate import gibbs
    from gpu_dpsyn.generate.ipf import cell_sums, grid_scale, on_grid, rows_normalised
    from test_polish import random_instance
    r = np.random.default_rng(29)
    for case in range(12):
        X, ctx, tables = random_instance(r)
        if case % 2:  # 37 values: tables of 37 cells or more, so several warps have gaps
            tables = [r.gamma(0.7, 4.0, (37, t.shape[1])) for t in tables]
        size, w = tables[0].shape[0], X.sum(axis=1).astype(np.float64)
        n, totals = float(w.sum()), [float(t.sum()) for t in tables]
        p = gibbs.allowed(ctx, tables, size)
        fused = gb.ipf_table(gb.asarray(p), gb.asarray(w), gb.asarray(ctx),
                             [gb.asarray(t) for t in tables], totals, grid_scale(n),
                             [grid_scale(n + x) for x in totals])
        for _ in range(3):
            worst = []
            for i, t in enumerate(tables):
                E = cell_sums(np, on_grid(np, p * w[:, None], n), ctx[:, i], t.shape[1]).T
                gap = on_grid(np, np.abs(E - t), n + totals[i])
                worst.append(0.5 * gap.sum() / max(totals[i], 1e-300))
                ok = (E > 0) & (t > 0)
                p = rows_normalised(np, p * np.where(ok, t / np.where(ok, E, 1.0),
                                                     1.0).T[ctx[:, i]])
            assert float(gb.to_numpy(fused.run())[0]) == max(worst)
        np.testing.assert_array_equal(gb.to_numpy(fused.p), p)


def test_blocks_of_two_warps(emu_so, monkeypatch, flights, flights_schema):
    # the kernel tests' blocks mode runs blocks of one warp (32 threads); here of two, whose
    # warps add their gap sums to one target's and share the histogram's counters
    from cuda_emu.emulate import emulated_backend
    gb = emulated_backend(monkeypatch, emu_so, 64)
    test_each_ipf_pass_reads_the_worst_tvd_of_the_array_code(gb)
    for attrs in [(2, 4), (0, 1, 11)]:
        test_histogram_equals_cpu(gb, flights, flights_schema, attrs)


@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("key32", [True, False])
def test_polish_passes_equal_cpu(gb, monkeypatch, chunked, key32):
    # polish.cu's passes (backends/cuda/passes.py) against NumPy's one_pass, pass by pass:
    # the same table, target counts and gain; chunks of one block and 64-bit keys forced
    from gpu_dpsyn.backends.cuda import passes
    from gpu_dpsyn.generate import polish
    from test_polish import polish_cases
    if not key32:
        monkeypatch.setattr(passes, "KEY32_CELLS", 0)
    moved = 0
    for X, ctx, tables, rank, s in polish_cases(12, 25):
        fused = gb.polish_table(
            gb.asarray(X.astype(np.int64)), [gb.asarray(x) for x in s],
            [gb.asarray(t) for t in tables], gb.asarray(ctx.astype(np.int64)),
            gb.asarray(rank.astype(np.int64)), 1 if chunked else polish.BLOCK_CELLS,
            polish.GAIN_TOLERANCE)
        Y = X.astype(np.int64)
        for _ in range(3):
            Y, s, gained = polish.one_pass(Y, s, ctx, tables, rank)
            got = float(fused.run())
            assert got == pytest.approx(gained, rel=1e-12, abs=1e-12) and \
                (got > 0) == (gained > 0)
            np.testing.assert_array_equal(gb.to_numpy(fused.X), Y)
            np.testing.assert_array_equal(gb.to_numpy(fused.s),
                                          np.concatenate([x.reshape(-1) for x in s]))
            moved += gained > 0
    assert moved > 20  # most passes moved records


def test_sweep_polish_and_shuffle_identical_on_cpu_and_gpu(gb):
    # the steps after GUM: device sorts, draws and table fits (gibbs, polish, shuffle)
    from gpu_dpsyn.generate.gibbs import gibbs_sweep
    from gpu_dpsyn.generate.polish import polish
    from gpu_dpsyn.generate.shuffle import neighbour_shuffle
    r = np.random.default_rng(3)
    n, sizes = 6000, [4, 3, 5, 2]
    a = r.integers(0, 4, n)
    b = (a + (r.random(n) < 0.4)) % 3
    c = (a + b + r.integers(0, 2, n)) % 5
    d = (c > 2).astype(int) ^ (r.random(n) < 0.2)
    real = [a, b, c, d]

    def hist(cols, attrs):
        idx = np.ravel_multi_index([cols[i] for i in attrs], [sizes[i] for i in attrs])
        return np.bincount(idx, minlength=int(np.prod([sizes[i] for i in attrs])))

    targets = [(t, tuple(sizes[i] for i in t), hist(real, t).astype(float) * 1.01 + 0.3)
               for t in [(0, 1), (1, 2), (2, 3), (0, 3), (0, 1, 2)]]
    start = [r.integers(0, k, n).astype(np.int32) for k in sizes]
    out = []
    for be in (get_backend("cpu"), gb):
        cols = [be.asarray(x.copy()) for x in start]
        assert gibbs_sweep(be, cols, targets, sizes, (11, 4), 2) == []
        assert polish(be, cols, targets, sizes, (11, 4), 2) == []
        neighbour_shuffle(be, cols, [t[0] for t in targets], sizes, (11, 4), 2, sweep=1)
        out.append([be.to_numpy(x) for x in cols])
    assert any(not np.array_equal(x, y) for x, y in zip(start, out[0]))  # they moved
    for x, y in zip(*out):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("midpoint", [False, True])
def test_numeric_columns_decode_on_the_device_as_on_the_host(gb, flights, flights_schema,
                                                            midpoint):
    """decode_numeric_on: every numeric column of flights (integer bins, the hhmm support,
    nullable ones) decoded where the codes are gives decode's host values, NaN for nulls
    and all."""
    from gpu_dpsyn.core import rng
    from gpu_dpsyn.generate.decode import decode, decode_numeric_on, on_device
    codes = encode(flights.iloc[:2500], flights_schema)
    mode = "midpoint" if midpoint else "uniform"
    host = decode(codes, flights_schema, 7, 3, mode)
    key = rng.split_key(7)
    done = 0
    for a, j in enumerate(flights_schema.synth_indices):
        col = flights_schema.columns[j]
        if not on_device(col, midpoint):
            continue
        got = decode_numeric_on(gb, gb.asarray(codes[a]), col, j, key, 3, midpoint)
        want = host[col.name].astype("float64").to_numpy()
        np.testing.assert_array_equal(got, want)
        done += 1
    assert done >= 5  # flights' numeric columns, the support and nullable ones among them


@pytest.mark.parametrize("table", ["flights", "x=y=z"])
def test_whole_pipeline_identical_on_cpu_and_gpu(gb, flights, flights_schema, monkeypatch, table):
    cols = ["month", "carrier", "origin", "distance", "sched_dep_time"]
    df = flights[cols].iloc[:2000]
    schema = {"columns": {c: flights_schema[c].to_dict() for c in cols}}
    if table == "x=y=z":  # a 3-way target with an appended attribute, its rest in GUM
        df, schema = xyz_table(2000, values=4)  # (its 64 cells stand out of the noise:
        # combined; 512 cells of 4 records would stay three pairs)
    kw = dict(seed=5, iterations=3, progress=False)
    cpu = Synthesizer(1.0, 1e-9, backend="cpu", **kw).fit(df, schema)
    a = cpu.sample()
    rounds = "3-way errors" in [e.label for e in cpu.ledger]
    assert rounds == (table != "x=y=z")  # x=y=z: its one triple is measured already
    if table == "x=y=z":
        assert cpu.last_run.structure.appended and cpu.last_run.structure.attrs[0] == (1, 2)
    from gpu_dpsyn import synthesizer as api
    monkeypatch.setattr(api, "get_backend", lambda name: gb)
    b = Synthesizer(1.0, 1e-9, backend="gpu", **kw).fit(df, schema).sample()
    pd.testing.assert_frame_equal(a, b)


def test_grouped_levels_from_a_public_prior_identical_on_cpu_and_gpu(gb, flights,
                                                                    flights_schema,
                                                                    monkeypatch):
    # group codes, the stop rule's where() and two GUM levels on the device's kernels
    cols = ["month", "carrier", "origin", "distance", "sched_dep_time"]
    df = flights[cols].iloc[:3000]
    schema = {"columns": {c: flights_schema[c].to_dict() for c in cols}}
    kw = dict(seed=5, iterations=3, progress=False, group_by=[["origin"], ["carrier"]],
              prior_tolerance=1.0)
    cpu = Synthesizer(1.0, 1e-9, backend="cpu", **kw).fit(df.iloc[1000:], schema,
                                                          public=df.iloc[:1000])
    a = cpu.sample()
    from gpu_dpsyn import synthesizer as api
    monkeypatch.setattr(api, "get_backend", lambda name: gb)
    b = Synthesizer(1.0, 1e-9, backend="gpu", **kw).fit(df.iloc[1000:], schema,
                                                        public=df.iloc[:1000]).sample()
    pd.testing.assert_frame_equal(a, b)


def test_auto_backend_falls_back_to_numpy_without_a_device():
    from gpu_dpsyn.backends import gpu_available
    be = get_backend("auto")
    assert be.name == ("gpu" if gpu_available() else "cpu")


def test_cuda_stream_ids_match_rng():
    import re

    from gpu_dpsyn.core import rng
    text = (launch.KERNEL_DIR / "common.cuh").read_text()
    found = dict(re.findall(r"#define STREAM_(\w+) (\d+)u", text))
    assert found and all(int(v) == getattr(rng, k) for k, v in found.items())
    consts = dict(re.findall(r"#define PHILOX_(\w\d) (0x[0-9A-F]+)u", text))
    assert all(int(v, 16) == getattr(rng, f"PHILOX_{k}") for k, v in consts.items())


def test_a_device_before_volta_orders_by_the_radix_sorts(gb, monkeypatch):
    """order.cu matches a warp's cells (__match_any_sync, compute 7.0 on): an older
    device's backend never launches it, and orders the records by the radix sorts."""
    from gpu_dpsyn.backends.cuda import updates
    cell = gb.asarray(np.random.default_rng(0).integers(0, 50, 500).astype(np.int32))
    launched = []
    real = launch.kernel
    set_everywhere(monkeypatch, "kernel", lambda m, n: launched.append(m) or real(m, n))
    order, idx_bits, _ = updates.cell_order(cell, 50, gb._sm, counting=False)
    assert "order.cu" not in launched and idx_bits != 31
    got = gb.to_numpy(order) & ((1 << idx_bits) - 1)
    assert np.array_equal(got, np.argsort(gb.to_numpy(cell), kind="stable"))
    assert gb._warp_match  # (the stand-ins are no older device)
    monkeypatch.setattr(gb, "_warp_match", False)
    r = np.random.default_rng(1)
    cols = [gb.asarray(r.integers(0, k, 400).astype(np.uint8)) for k in (5, 7)]
    c, s = gb.cell_histogram(cols, (0, 1), (5, 7))
    add, rem = gb.plan_update(s, gb.asarray(np.full(35, 400 / 35)), 1.0)
    launched.clear()
    gb.gum_apply(cols, (0, 1), (5, 7), c, s, add, rem, 0.5, (1, 2), 0, 0)
    assert "gum.cu" in launched and "order.cu" not in launched


def test_the_counting_sort_in_eight_warps_at_the_shared_memory_bound(gb, monkeypatch):
    """order.cu as a device runs it: blocks of 256 threads (the emulator's default is two
    warps), with the most cells a block's 48 KiB hold beside them."""
    from gpu_dpsyn.backends.cuda import updates
    set_everywhere(monkeypatch, "ORDER_THREADS", 256)
    cells = launch.SHARED_CELLS - 256
    cell = np.random.default_rng(3).integers(0, cells, 5000).astype(np.int32)
    cell[:300] = 7  # a run of one cell across chunks and warps
    order, idx_bits, _ = updates.cell_order(gb.asarray(cell), cells, gb._sm)
    assert idx_bits == 31 and 4 * (cells + 256) == 48 * 1024
    got = gb.to_numpy(order) & ((1 << idx_bits) - 1)
    assert np.array_equal(got, np.argsort(cell, kind="stable"))
