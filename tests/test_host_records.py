"""host_philox.cpp and host_records.cpp (the records' Philox words and GUM's Feistel
removal ranks built for the CPU) give exactly what philox.py and permute.py give, and the
NumPy backend's records are the same with the build and without it."""
import os

import numpy as np
import pytest

from gpu_dpsyn.backends.numpy import host_build, host_kernels, ops
from gpu_dpsyn.backends.numpy.update import update_records
from gpu_dpsyn.backends.numpy.permute import feistel_ranks, round_keys
from gpu_dpsyn.core.philox import philox4x32


@pytest.fixture
def lib():
    built = host_kernels.library()
    if built is None:
        pytest.skip("no C++ compiler: the NumPy bodies serve alone")
    return built


@pytest.mark.parametrize("key,n,c", [((0, 0), 1, (0, 0, 0)), ((5, 6), 3000, (3, 2, 1)),
                                     ((0xFFFFFFFF, 0x12345678), 777, (0xFFFFFFFF, 1 << 31, 9)),
                                     ((1 << 40, 3), 10, (7, 8, 2 ** 32 + 5)), ((1, 2), 0, (1, 1, 1))])
def test_philox_words_equal_numpy(lib, key, n, c):
    want = philox4x32(key, np.arange(n, dtype=np.uint64), *c)
    for words in (1, 2, 3, 4):  # a loop a word (host_philox.cpp): each of them
        got = host_kernels.philox_range(lib, key, n, *c, words)
        assert len(got) == words and all(np.array_equal(g, w) for g, w in zip(got, want))
    first = host_kernels.philox_range(lib, key, n, *c)  # one word: the first
    assert len(first) == 1 and np.array_equal(first[0], want[0])


def test_philox_words_in_blocks_on_threads_equal_numpy(lib, monkeypatch):
    from gpu_dpsyn.core import threads
    monkeypatch.setenv("GPU_DPSYN_THREADS", "3")
    n = 100003
    assert len(threads.blocks(n, host_kernels.PHILOX_WORK)) == 3
    got = host_kernels.philox_range(lib, (11, 12), n, 5, 6, 7, 3)
    want = philox4x32((11, 12), np.arange(n, dtype=np.uint64), 5, 6, 7)
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_feistel_ranks_equal_numpy_and_are_bijections(lib):
    rng = np.random.default_rng(3)
    size = np.r_[1, 2, 3, 4, 5, 17, 1 << 16, (1 << 16) + 1, rng.integers(1, 1 << 40, 500)]
    r = (rng.random(len(size)) * size).astype(np.int64)
    salt = rng.integers(0, 1 << 40, len(size))  # the low word salts, as in NumPy
    keys = round_keys((9, 10), 4, 2)
    assert np.array_equal(host_kernels.feistel(lib, r, size, salt, keys),
                          feistel_ranks(r, size, salt, keys))
    for s in (1, 7, 64, 1000):  # every rank of a cell: a permutation of it
        all_r = np.arange(s)
        pi = host_kernels.feistel(lib, all_r, np.full(s, s), np.full(s, 5), keys)
        assert sorted(pi.tolist()) == all_r.tolist()


def test_a_build_that_disagrees_is_not_used(lib, monkeypatch):
    monkeypatch.setattr(host_kernels, "feistel", lambda *a: np.zeros(1000, dtype=np.int64))
    assert not host_kernels._agrees_with_numpy(lib)
    monkeypatch.undo()
    monkeypatch.setattr(host_kernels, "philox_range", lambda *a: (np.zeros(1000, np.uint32),) * 4)
    assert not host_kernels._agrees_with_numpy(lib)
    monkeypatch.undo()
    real = host_kernels.ipf_scale_margin

    def last_bit_off(lib, P, *a):  # a rescale rounding one entry otherwise (fast-math)
        part = real(lib, P, *a)
        P[0, 1] = np.nextafter(P[0, 1], 2.0)
        return part
    monkeypatch.setattr(host_kernels, "ipf_scale_margin", last_bit_off)
    assert not host_kernels._agrees_with_numpy(lib)
    monkeypatch.undo()
    assert host_kernels._agrees_with_numpy(lib)


# what the review's hand-made variants of host_philox.cpp wrote, from a correct block's
# call(lo, hi, words) (each passed the check of four words from counter 0 alone)
def _shifted(call, lo, hi, words, fill):  # written from out[0], not out[lo]
    out = call(lo, hi, words)
    moved = np.full_like(out, fill)
    moved[:, :hi - lo] = out[:, lo:hi]
    return moved


def _second_word(call, lo, hi, words, fill):  # one word asked for, the second given
    return call(lo, hi, 2)[1:] if words == 1 else call(lo, hi, words)


def _one_past(call, lo, hi, words, fill):  # i <= hi
    return call(lo, hi + 1, words)


def _first_skipped(call, lo, hi, words, fill):  # counting from lo + 1
    return call(lo + 1, hi, words)


@pytest.mark.parametrize("wrong", [_shifted, _second_word, _one_past, _first_skipped])
def test_the_load_check_refuses_philox_blocks_written_wrong(lib, monkeypatch, wrong):
    real = host_kernels.philox_block

    def block(lib, key, n, lo, hi, c1, c2, c3, words, fill):
        return wrong(lambda a, b, w: real(lib, key, n, a, b, c1, c2, c3, w, fill), lo, hi,
                     words, fill)
    monkeypatch.setattr(host_kernels, "philox_block", block)
    assert not host_kernels._agrees_with_numpy(lib)
    monkeypatch.undo()
    assert host_kernels._agrees_with_numpy(lib)


def test_records_are_the_same_without_the_build(lib, monkeypatch):
    be = ops.NumpyBackend()
    rng = np.random.default_rng(11)

    def run():
        cols = be.init_records([np.bincount(rng_col, minlength=k)
                                for rng_col, k in ((c0, 6), (c1, 9))], (3, 4), 1)
        attrs, shape = (0, 1), (6, 9)
        for update in range(3):
            cell, s = be.cell_histogram(cols, attrs, shape)
            t = np.random.default_rng(update).permutation(s).astype(float)
            add, rem = be.plan_update(s, t, 0.7)
            be.gum_apply(cols, attrs, shape, cell, s, add, rem, 0.5, (1, 2), update, 0)
        return cols, be.uniforms((7, 8), 5000, 1, 2, 3)
    c0, c1 = rng.integers(0, 6, 20000), rng.integers(0, 9, 20000)
    with_lib = run()
    monkeypatch.setattr(host_kernels, "library", lambda: None)
    without = run()
    assert all(np.array_equal(a, b) for a, b in zip(with_lib[0], without[0]))
    assert np.array_equal(with_lib[1], without[1])


def test_with_a_compiler_the_build_loads_and_agrees():
    """A build that failed its known-answer check would serve NumPy silently: with a
    compiler at hand it must load."""
    if host_build.compiler() is None or os.environ.get(
            "GPU_DPSYN_HOST_KERNELS", "1") == "0":
        pytest.skip("no C++ compiler, or the build is turned off")
    assert host_kernels.library() is not None


def _fresh_build(monkeypatch, tmp_path):
    if host_build.compiler() is None:
        pytest.skip("no C++ compiler")
    monkeypatch.setenv("GPU_DPSYN_CACHE", str(tmp_path))
    monkeypatch.setenv("GPU_DPSYN_HOST_KERNELS", "1")
    host_kernels.library.cache_clear()
    try:
        return host_kernels.library(), sorted(p.name for p in tmp_path.glob("*.so"))
    finally:
        host_kernels.library.cache_clear()


def test_a_build_for_another_cpu_is_another_file(monkeypatch, tmp_path):
    """-march=native code can stop another CPU with an illegal instruction: the target is
    in the cache key, so a cache shared by two machines holds a build for each."""
    lib, first = _fresh_build(monkeypatch, tmp_path)
    assert lib is not None and len(first) == 1
    monkeypatch.setattr(host_build, "_target", lambda cxx: b"another cpu")
    lib, both = _fresh_build(monkeypatch, tmp_path)
    assert lib is not None and len(both) == 2 and first[0] in both



def test_an_empty_cache_variable_is_the_default_cache(monkeypatch, tmp_path):
    """GPU_DPSYN_CACHE= (set, empty) is no cache named: the builds once went to the
    working directory as bare file names, which ctypes then looked for on the library
    path and never loaded (NumPy served, slower, with two .so files left in the user's
    directory)."""
    if host_build.compiler() is None:
        pytest.skip("no C++ compiler")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(), work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    monkeypatch.setenv("GPU_DPSYN_CACHE", "")
    monkeypatch.setenv("GPU_DPSYN_HOST_KERNELS", "1")
    host_kernels.library.cache_clear()
    try:
        assert host_kernels.library() is not None
    finally:
        host_kernels.library.cache_clear()
    assert list(work.iterdir()) == []
    assert list((home / ".cache" / "gpu_dpsyn").glob("*.so"))



def test_the_clock_rate_is_not_in_the_native_key():
    """/proc/cpuinfo's "cpu MHz" changes from read to read on a machine that scales its
    clock: in the key, every process made (and kept) a native build of its own."""
    lines = [b"model name\t: Some CPU\n", b"flags\t\t: fpu sse2 avx2\n",
             b"cpu family\t: 25\n"]
    keys = {host_build._cpu_lines(lines + [f"cpu MHz\t\t: {mhz}\n".encode()])
            for mhz in ("2596.128", "3400.001")}
    assert len(keys) == 1 and b"avx2" in keys.pop()

def test_a_compiler_refusing_the_native_flags_gives_the_plain_build(monkeypatch, tmp_path):
    monkeypatch.setattr(host_build, "NATIVE", {"host_ipf.cpp": ("-fno-such-flag-here",)})
    lib, built = _fresh_build(monkeypatch, tmp_path)
    assert lib is not None and len(built) == 1  # the plain one: no native file is kept


def test_a_native_compile_that_hangs_gives_the_plain_build(monkeypatch, tmp_path):
    real = host_build.subprocess.run

    def run(args, *a, **k):
        if "-march=native" in args and "-c" in args and os.devnull not in args:
            raise host_build.subprocess.TimeoutExpired(args, 1)
        return real(args, *a, **k)
    monkeypatch.setattr(host_build.subprocess, "run", run)
    lib, built = _fresh_build(monkeypatch, tmp_path)
    assert lib is not None and len(built) == 1


def test_a_native_build_failing_the_check_gives_the_plain_build(monkeypatch, tmp_path):
    """A native build that rounds otherwise is refused by the load check; the plain build
    serves instead of none (NumPy), with every other kernel."""
    seen = []
    real = host_kernels._agrees_with_numpy

    def first_refused(lib):
        seen.append(lib)
        return len(seen) > 1 and real(lib)
    monkeypatch.setattr(host_kernels, "_agrees_with_numpy", first_refused)
    lib, built = _fresh_build(monkeypatch, tmp_path)
    assert lib is not None and len(seen) == 2 and len(built) == 2 and lib is seen[1]


def test_the_host_wrappers_refuse_what_would_read_past_or_never_end(lib):
    keys = [1, 2, 3, 4]
    with pytest.raises(ValueError, match="sizes of 1 or more"):
        host_kernels.feistel(lib, [0], [0], [0], keys)  # size 0: no rank to walk to
    with pytest.raises(ValueError):
        host_kernels.feistel(lib, [0, 1], [5], [0, 0], keys)
    with pytest.raises(ValueError):
        host_kernels.feistel(lib, [0], [5], [0], keys[:3])
    with pytest.raises(ValueError, match="1 to 4 words"):
        host_kernels.philox_range(lib, (1, 2), 10, 0, 0, 0, 5)


@pytest.mark.parametrize("dtype,bound", [(np.uint16, 1), (np.uint16, 300), (np.uint16, 1 << 16),
                                         (np.int64, 70000), (np.int64, 5)])
def test_counting_argsort_is_the_stable_argsort(lib, dtype, bound):
    rng = np.random.default_rng(bound)
    for n in (0, 1, 1000, 50000):
        keys = rng.integers(0, bound, n).astype(dtype)
        assert np.array_equal(host_kernels.counting_argsort(lib, keys, bound),
                              np.argsort(keys, kind="stable"))
        if n:  # a key at or past the bound: refused, never placed past the end
            bad = keys.copy()
            bad[n // 2] = bound if bound < (1 << 16) or dtype == np.int64 else 0
            if bad[n // 2] == bound:
                assert host_kernels.counting_argsort(lib, bad, bound) is None
    assert host_kernels.counting_argsort(lib, np.array([-1, 0]), 2) is None
    assert host_kernels.counting_argsort(lib, np.zeros(3, np.int32), 2) is None  # dtype


def test_gum_cell_order_is_the_same_without_the_build(lib, monkeypatch):
    cell = np.random.default_rng(4).integers(0, 9000, 30000).astype(np.uint16)
    built = ops.argsort_bounded(np, cell, 9000)
    monkeypatch.setattr(host_kernels, "library", lambda: None)
    assert np.array_equal(built, ops.argsort_bounded(np, cell, 9000))
    assert np.array_equal(built, np.argsort(cell, kind="stable"))


@pytest.mark.parametrize("attrs", [(0,), (1, 2), (0, 1, 2), (2, 3, 0)])
def test_gum_updates_equal_numpys(lib, attrs):
    """host_gum.cpp (gum.cu's kernels a slot at a time) moves the records NumPy's body
    moves: 8-, 16- and 32-bit columns, Duplicate only, Replace only and mixed, copying
    every column or some."""
    r = np.random.default_rng(len(attrs) * 7 + attrs[0])
    sizes = (3, 300, 5, 70000)
    n = 20000
    start = [r.integers(0, d, n).astype(ops.code_dtype(d)) for d in sizes]
    start[1][: n // 2] = r.integers(0, 4, n // 2)  # crowded cells and empty ones
    shape = tuple(sizes[a] for a in attrs)
    be = ops.NumpyBackend()
    for dup, copy in ((0.0, None), (0.5, None), (1.0, [0, 3]), (0.7, [1])):
        got, want = [c.copy() for c in start], [c.copy() for c in start]
        cell, s = be.cell_histogram(got, attrs, shape)
        t = np.roll(s, 1).astype(float) + r.random(s.size)
        add, rem = be.plan_update(s, t, 0.6)
        assert add.sum() > 100
        be.gum_apply(got, attrs, shape, cell, s, add, rem, dup, (5, 6), 3, 2, copy)
        update_records(want, attrs, shape, np.argsort(cell, kind="stable"), s, add, rem, dup,
                       (5, 6), 3, 2, copy)
        assert all(np.array_equal(a, b) for a, b in zip(got, want))
        assert any(not np.array_equal(a, b) for a, b in zip(got, start))


def test_gum_updates_in_blocks_of_slots_on_threads_equal_numpys(lib, monkeypatch):
    """The host update's slots split over threads (removals, then fills) move the records
    NumPy's body moves: blocks start inside a cell's run of removals."""
    from gpu_dpsyn.core import threads
    monkeypatch.setenv("GPU_DPSYN_THREADS", "3")
    r = np.random.default_rng(4)
    n, shape = 60000, (7, 11)
    skew = [np.arange(1, d + 1) ** 2 / (np.arange(1, d + 1) ** 2).sum() for d in shape + (5,)]
    start = [r.choice(len(p), n, p=p).astype(np.uint8) for p in skew]  # uneven cells
    be = ops.NumpyBackend()
    for dup in (0.0, 0.6):
        got, want = [c.copy() for c in start], [c.copy() for c in start]
        cell, s = be.cell_histogram(got, (0, 1), shape)
        add, rem = be.plan_update(s, r.permutation(s).astype(float), 0.9)
        assert len(threads.blocks(int(add.sum()), host_kernels.SLOT_WORK)) == 3
        be.gum_apply(got, (0, 1), shape, cell, s, add, rem, dup, (1, 2), 9, 4)
        update_records(want, (0, 1), shape, np.argsort(cell, kind="stable"), s, add, rem, dup,
                       (1, 2), 9, 4, None)
        assert all(np.array_equal(a, b) for a, b in zip(got, want))
        assert any(not np.array_equal(a, b) for a, b in zip(got, start))


def test_a_gum_build_that_disagrees_is_not_used(lib, monkeypatch):
    monkeypatch.setattr(host_kernels, "gum_apply", lambda *a, **k: True)  # moves nothing
    assert not host_kernels._agrees_with_numpy(lib)


def test_gum_plans_and_removal_rates_equal_numpys(lib):
    """host_tables.cpp's bisection: the same rate to the bit, hence the same plan."""
    from gpu_dpsyn.backends import arrays
    r = np.random.default_rng(17)
    be = ops.NumpyBackend()
    for n, alpha in [(1, 1.0), (7, 0.3), (300, 1.0), (3255, 0.84), (5000, 2.0), (64, 1.0)]:
        s = r.poisson(r.choice([0.5, 4.0, 40.0]), n)
        s[r.random(n) < 0.2] = 0
        t = r.gamma(0.7, s.mean() + 1, n)
        t *= s.sum() / max(t.sum(), 1e-9)
        got, want = be.plan_update(s, t, alpha), arrays.plan_update(np, s, t, alpha)
        assert all(np.array_equal(a, b) for a, b in zip(got, want))
        sf = s.astype(np.float64)
        over = np.where(t - sf < 0, sf - t, 0.0)
        for total in (0.0, 1.0, float(np.rint(over).sum()), float(r.integers(0, 50))):
            assert float(host_kernels.removal_rate(lib, over, sf, total, arrays.BISECT_STEPS)) \
                == float(arrays.removal_rate(np, over, sf, total))


@pytest.mark.parametrize("sizes", [(7,), (300, 12), (12, 300, 9), (70000, 5), (3, 70000, 2),
                                   (256, 256), (65536,)])
def test_cell_histograms_equal_numpys(lib, sizes, monkeypatch):
    """host_records.cpp's one-pass cells and counts: every code width, 1 to 3 columns,
    16-bit cells up to 2^16 and int64 past; codes past the shape go to NumPy."""
    r = np.random.default_rng(sum(sizes))
    cols = [r.integers(0, d, 5000).astype(ops.code_dtype(d)) for d in sizes]
    attrs = tuple(range(len(sizes)))
    be = ops.NumpyBackend()
    got = be.cell_histogram(cols, attrs, sizes)
    monkeypatch.setattr(host_kernels, "library", lambda: None)
    want = be.cell_histogram(cols, attrs, sizes)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    cols[0][7] = sizes[0] if sizes[0] < np.iinfo(cols[0].dtype).max else 0
    if cols[0][7] == sizes[0]:
        assert host_kernels.cell_histogram(lib, cols, sizes) is None


@pytest.mark.parametrize("threads", ["2", "3", "8"])
@pytest.mark.parametrize("dtype,bound", [(np.uint16, 1), (np.uint16, 977), (np.int64, 5),
                                         (np.int64, 20000)])
def test_counting_argsort_in_blocks_of_records_is_the_stable_argsort(lib, threads, dtype,
                                                                    bound, monkeypatch):
    """Each block counts apart and places from its own first slots: the stable order for
    any number of blocks; a key past the bound in the last block refuses it all."""
    from gpu_dpsyn.core import threads as tk
    monkeypatch.setenv("GPU_DPSYN_THREADS", threads)
    r = np.random.default_rng(bound)
    n = 400000
    keys = r.integers(0, bound, n).astype(dtype)
    keys[: n // 3] = keys[0]  # a run of one key across blocks
    calls = []
    real = lib.host_counting_place_u16 if dtype == np.uint16 else lib.host_counting_place_i64

    class Spy:  # the blocks' placing calls, counted
        def __getattr__(self, name):
            if name.startswith("host_counting_place_"):
                return lambda *a: calls.append(a[:2]) or real(*a)
            return getattr(lib, name)
    got = host_kernels.counting_argsort(Spy(), keys, bound)
    assert np.array_equal(got, np.argsort(keys, kind="stable"))
    parts = len(tk.blocks(n))
    assert len(calls) == (parts if bound * host_kernels.COUNTING_PER_BLOCK * parts <= n
                          else 0)
    # the threads' count changing between the two phases (the environment, the CPU
    # affinity): both phases still fall on the first's blocks
    seen = iter([int(threads), 2, 5, 3, 7])
    monkeypatch.setattr(tk, "count", lambda: next(seen, 4))
    assert np.array_equal(host_kernels.counting_argsort(lib, keys, bound), np.argsort(
        keys, kind="stable"))
    monkeypatch.undo()
    monkeypatch.setenv("GPU_DPSYN_THREADS", threads)
    if bound < (1 << 16) - 1:  # a key at the bound, in the last block: refused
        keys[-2] = bound
        assert host_kernels.counting_argsort(lib, keys, bound) is None
    assert host_kernels.counting_argsort(lib, np.zeros(n, dtype), 0) is None  # no key fits


@pytest.mark.parametrize("sizes", [(7,), (300, 12), (70000, 5)])
def test_cell_histograms_in_blocks_of_records_equal_numpys(lib, sizes, monkeypatch):
    """Blocks of records on three threads, each counting apart (or one block where the
    histogram is not small beside the records); a code past the shape in the last block
    still sends the whole histogram to NumPy."""
    monkeypatch.setenv("GPU_DPSYN_THREADS", "3")
    r = np.random.default_rng(len(sizes))
    cols = [r.integers(0, d, 250000).astype(ops.code_dtype(d)) for d in sizes]
    got = host_kernels.cell_histogram(lib, cols, sizes)
    cell = np.ravel_multi_index(cols, sizes)
    assert np.array_equal(got[0], cell)
    assert np.array_equal(got[1], np.bincount(cell, minlength=int(np.prod(sizes))))
    cols[0][-3] = sizes[0]
    assert host_kernels.cell_histogram(lib, cols, sizes) is None


def test_ipf_margins_round_ties_to_even_as_numpy(lib):
    """host_ipf.cpp's margin rounds p w 2^K as np.rint does: halves to even, values near
    and past 2^52, zeros; summed by cell and scaled back."""
    half = np.array([0.5, 1.5, 2.5, 3.5, 1e6 + 0.5, 2.0 ** 51 + 0.5, 2.0 ** 52 - 1.0,
                     2.0 ** 52, 2.0 ** 52 + 2.0, 0.0, 7.25, 7.75])
    P = np.ascontiguousarray(np.stack([half, half[::-1]]))  # 2 values x 12 contexts
    wg = np.ones(12)
    cells = np.array([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3], dtype=np.int64)
    out = np.empty((2, 4))
    host_kernels.ipf_margin(lib, P, wg, cells, 4, 0.5, out, 0, 2)
    want = np.stack([np.bincount(cells, weights=np.rint(row), minlength=4) for row in P]) * 0.5
    assert np.array_equal(out, want)


def test_the_host_wrappers_refuse_what_the_loops_would_misindex(lib):
    cols = [np.zeros(10, np.uint8), np.zeros(10, np.uint8)]
    s = np.array([6, 4, 0])
    with pytest.raises(ValueError, match="removals"):  # more removals than a cell holds
        host_kernels.gum_apply(lib, cols, (0,), (3,), np.arange(10), s, np.array([0, 0, 5]),
                               np.array([0, 5, 0]), 0.5, (1, 2), 0, 0)
    with pytest.raises(ValueError, match="removals"):  # fewer removals than slots
        host_kernels.gum_apply(lib, cols, (0,), (3,), np.arange(10), s, np.array([0, 0, 5]),
                               np.array([2, 0, 0]), 0.5, (1, 2), 0, 0)
    X = np.ones((4, 3), np.int64)
    tabs = np.zeros(2 * 3 * 5)
    out = (np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4))
    for bad in (5, -1):  # a context past its table, or before it
        with pytest.raises(ValueError, match="cells within"):
            host_kernels.best_moves(lib, *host_kernels.moves_inputs(
                X, tabs, np.array([0], np.int64), np.array([[0], [1], [bad], [4]], np.int64)),
                0, 4, out)
    host_kernels.best_moves(lib, *host_kernels.moves_inputs(
        X, tabs, np.array([0], np.int64), np.array([[0], [1], [4], [4]], np.int64)), 0, 4, out)


def test_the_wrappers_refuse_malformed_orders_columns_and_contexts(lib):
    """The review's reproductions: each would have read or written past an array."""
    for order in ([1 << 40], [0, 0], [-1, 0]):  # not a permutation
        zero = np.zeros(len(order), np.int64)
        with pytest.raises(ValueError, match="order of the proposals"):
            host_kernels.move_gains(lib, np.array(order), [(zero, zero, 1, np.zeros(1), True)],
                                    np.ones(len(order), np.int64))
    with pytest.raises(ValueError, match="within the table"):  # a cell outside g
        host_kernels.move_blocks(lib, np.ones((2, 1), np.int64), np.array([1, 0]),
                                 np.zeros(2, np.int64), np.zeros(2, np.int64),
                                 [np.array([0, -1])], [np.zeros((1, 1))], [1])
    s, add, rem = np.array([6, 4, 0]), np.array([0, 0, 2]), np.array([2, 0, 0])
    cols = [np.zeros(10, np.uint8), np.zeros(10, np.uint8)]
    bad_order = np.arange(10)
    bad_order[3] = 1 << 40
    for args in ((cols, (0,), (3,), bad_order), (cols, (3,), (3,), np.arange(10)),
                 ([cols[0], np.zeros(4, np.uint8)], (0,), (3,), np.arange(10))):
        with pytest.raises(ValueError, match="GUM's update"):
            host_kernels.gum_apply(lib, *args, s, add, rem, 0.5, (1, 2), 0, 0)
    X = np.ones((4, 3), np.int64)
    with pytest.raises(ValueError, match="context row"):  # fewer context rows than X
        host_kernels.moves_inputs(X, np.zeros(30), [0], np.zeros((3, 1), np.int64))
    strided = np.zeros((4, 2), np.int32)[:, ::2]  # converted, not read as raw memory
    got = host_kernels.moves_inputs(X, np.zeros(30), [0], strided)[3]
    assert got.dtype == np.int64 and got.flags.c_contiguous


def test_a_build_whose_float_loops_disagree_is_not_used(lib, monkeypatch):
    real = host_kernels.ipf_margin

    def floor_rounding(lib, P, wg, cells, n, inv, out, lo, hi):  # as fast-math would
        real(lib, P, wg, cells, n, inv, out, lo, hi)
        out[:] = np.floor(P * wg / 1.0)[:, :n] * inv if P.shape[1] == n else out
    monkeypatch.setattr(host_kernels, "ipf_margin", floor_rounding)
    assert not host_kernels._agrees_with_numpy(lib)
    monkeypatch.undo()
    monkeypatch.setattr(host_kernels, "best_moves", lambda lib, X, t, o, c, lo, hi, out:
                        [a.fill(0) for a in out])
    assert not host_kernels._agrees_with_numpy(lib)
    monkeypatch.undo()
    assert host_kernels._agrees_with_numpy(lib)


def test_a_build_adding_the_targets_in_another_order_is_not_used(lib, monkeypatch):
    """The best moves' sums, the targets added last to first (the real loop, handed the
    targets reversed): a build that reassociates.  The load check's float gains tell
    it from the right order (whole and half gains could not: their sums are exact)."""
    real = host_kernels.best_moves

    def reversed_targets(lib, X, tabs, offs, ctx, lo, hi, out):
        ends = np.append(offs[1:], tabs.size)
        parts = [tabs[a:b] for a, b in zip(offs, ends)][::-1]
        roffs = np.cumsum([0] + [p.size for p in parts[:-1]]).astype(np.int64)
        real(lib, X, np.concatenate(parts), roffs, np.ascontiguousarray(ctx[:, ::-1]), lo, hi,
             out)
    monkeypatch.setattr(host_kernels, "best_moves", reversed_targets)
    assert not host_kernels._agrees_with_numpy(lib)


def test_float_keys_are_not_truncated_into_the_counting_sort(lib):
    with pytest.raises(TypeError):
        ops.argsort_bounded(np, np.array([0.7, 0.2, 1.5, 0.1]), 2)


@pytest.mark.parametrize("size", [1, 2, 5, 300])
def test_row_cdfs_and_draws_equal_the_numpy_bodies(lib, monkeypatch, size):
    """draw.cu built for the host (the CDFs) and host_draw_rows (the search in a row)
    against the NumPy bodies that serve without the build: rows with zeros, a row of
    none, sums past 1, draws at both ends of (0, 1) and rows where r + u rounds."""
    from gpu_dpsyn.generate.gum import draw_rows
    r = np.random.default_rng(size)
    R = 12000
    cond = r.gamma(0.3, 1.0, (R, size)) * (r.random((R, size)) < 0.6)
    cond /= np.where(cond.sum(1, keepdims=True) > 0, cond.sum(1, keepdims=True), 1.0)
    cond[1], cond[0] = 0.0, 1.0 / 3.0
    row = r.integers(0, R, 20000)
    u = r.random(20000)
    u[:50], u[50:100] = 1.0 - 2.0 ** -40, 1e-300
    row[:50] = np.arange(R - 50, R)
    be = ops.NumpyBackend()
    fast = be.cdf_rows(cond), draw_rows(be, cond, row, u)
    monkeypatch.setattr(host_kernels, "library", lambda: None)
    slow = be.cdf_rows(cond), draw_rows(be, cond, row, u)
    assert fast[0][0].tobytes() == slow[0][0].tobytes()
    assert np.array_equal(fast[0][1], slow[0][1]) and np.array_equal(fast[1], slow[1])


def test_a_build_whose_draws_disagree_is_not_used(lib, monkeypatch):
    real = host_kernels.draw_rows

    def unclipped(lib, flat, size, row, u, last, out, lo, hi):  # no cap at the last value
        real(lib, flat, size, row, u, np.full(len(last), size - 1), out, lo, hi)
    monkeypatch.setattr(host_kernels, "draw_rows", unclipped)
    assert not host_kernels._agrees_with_numpy(lib)
    monkeypatch.undo()
    monkeypatch.setattr(host_kernels, "cdf_rows", lambda lib, cond, flat, last, lo, hi:
                        flat.__setitem__(slice(lo * cond.shape[1], hi * cond.shape[1]),
                                         (np.cumsum(cond[lo:hi], axis=1)
                                          + np.arange(lo, hi)[:, None]).reshape(-1))
                        or last.__setitem__(slice(lo, hi), cond.shape[1] - 1))
    assert not host_kernels._agrees_with_numpy(lib)
    monkeypatch.undo()
    assert host_kernels._agrees_with_numpy(lib)


def test_draws_refuse_what_their_loops_would_read_past(lib):
    """The review's reproductions: rows outside the table, an int32 row read as int64, a
    range past the records, a short draw or output, CDFs of another table (each would
    have read or written past an array)."""
    flat, last = np.arange(6, dtype=np.float64) / 2, np.array([1, 1, 1])
    row, u, out = np.array([0, 1]), np.full(2, 0.5), np.empty(2, dtype=np.int64)
    for args in (([0, 3], u, out, flat, 0, 2), ([-1, 0], u, out, flat, 0, 2),
                 (np.array([1, 1], np.int32), u, out, flat, 0, 2),
                 (row, u, out, flat, 0, 1 << 22), (row, u[:1], out, flat, 0, 2),
                 (row, u, out[:1], flat, 0, 2), (row, u, out, flat[:4], 0, 2)):
        r, uu, o, f, lo, hi = args
        with pytest.raises(ValueError, match="row"):
            host_kernels.draw_rows(lib, f, 2, np.asarray(r), uu, last, o, lo, hi)
    cond = np.full((3, 2), 0.5)
    for f, la, hi in ((flat[:4], np.empty(3, np.int64), 3), (flat, np.empty(3, np.int32), 3),
                      (flat, np.empty(3, np.int64), 4)):
        with pytest.raises(ValueError, match="cdf_rows"):
            host_kernels.cdf_rows(lib, cond, f, la, 0, hi)


def test_a_draw_for_every_record_from_one_u_is_numpys(lib, monkeypatch):
    """A single u broadcast over the records (the NumPy body's arithmetic) is not read
    past: the host loop takes only a draw per record."""
    from gpu_dpsyn.generate.gum import draw_rows
    cond, row, u = np.full((3, 4), 0.25), np.arange(3).repeat(1000), np.array([0.9])
    be = ops.NumpyBackend()
    got = draw_rows(be, cond, row, u)
    monkeypatch.setattr(host_kernels, "library", lambda: None)
    assert np.array_equal(got, draw_rows(be, cond, row, u)) and (got == 3).all()


def test_gum_refuses_a_cell_that_gains_and_loses(lib):
    """Slots run in blocks on threads only because no donor is a removed record: a plan
    adding to and removing from one cell is refused, not raced."""
    cols = [np.array([0, 0, 0, 1, 1, 2], np.uint8)]
    s = np.array([3, 2, 1])
    with pytest.raises(ValueError, match="GUM's update"):
        host_kernels.gum_apply(lib, cols, (0,), (3,), np.arange(6), s, np.array([1, 0, 0]),
                               np.array([1, 0, 0]), 0.5, (1, 2), 0, 0)


def test_move_gains_on_threads_equal_the_numpy_sort(lib, monkeypatch):
    """host_tables.cpp's pass in priority order, the blocks on three threads, against
    polish's NumPy body (every block in one sort of the blocks' cells)."""
    from gpu_dpsyn.core import threads
    from gpu_dpsyn.generate import polish
    monkeypatch.setenv("GPU_DPSYN_THREADS", "3")
    r = np.random.default_rng(8)
    m = 50000
    q, prio = r.integers(1, 5, m), r.permutation(m)
    moves = [(r.integers(0, 5, m), r.integers(0, 8, m), 8, r.normal(0, 30, 40).round(2),
              bool(k % 2)) for k in range(6)]
    assert len(threads.blocks(len(moves), m)) == 3
    by_priority = np.empty(m, np.int64)
    by_priority[prio] = np.arange(m)
    fast = host_kernels.move_gains(lib, by_priority, moves, q)
    slow = polish.all_block_gains([(w * n + ci, g, leaving) for w, ci, n, g, leaving in moves],
                                  q, prio)
    assert len(fast) == 6 and all(np.array_equal(a, b) for a, b in zip(fast, slow))


def test_a_polish_pass_with_the_host_build_equals_numpys(lib, monkeypatch):
    """one_pass with host_tables.cpp's block sizes and gains from the proposals' values
    and cells (no cells stored), against the NumPy body: the same table, counts and gain,
    pass after pass; contexts sharing cells, fractional and zero targets."""
    from gpu_dpsyn.generate import polish
    from test_polish import polish_cases
    moved = 0
    for X, ctx, tables, rank, s in polish_cases(21, 60):
        runs = []
        for host in (True, False):
            if not host:
                monkeypatch.setattr(host_kernels, "library", lambda: None)
            Y, sY, got = X.astype(np.int64), list(s), []
            for _ in range(3):
                Y, sY, gained = polish.one_pass(Y, sY, ctx, tables, rank)
                got.append((Y.copy(), [x.copy() for x in sY], gained))
            runs.append(got)
            monkeypatch.undo()
        for (a, sa, ga), (b, sb, gb) in zip(*runs):
            assert np.array_equal(a, b) and ga == gb
            assert all(np.array_equal(x, y) for x, y in zip(sa, sb))
            moved += ga > 0
    assert moved > 40


def test_move_blocks_refuse_indices_outside_the_table(lib):
    X = np.ones((4, 3), np.int64)
    g = [np.zeros((3, 2))]
    ok = dict(rows=np.array([0, 3]), u=np.array([0, 2]), v=np.array([1, 1]),
              c=[np.array([1, 0])])
    host_kernels.move_blocks(lib, X, ok["rows"], ok["u"], ok["v"], ok["c"], g, [2])
    for bad in (dict(ok, rows=np.array([0, 4])), dict(ok, u=np.array([0, 3])),
                dict(ok, v=np.array([-1, 1])), dict(ok, c=[np.array([2, 0])])):
        with pytest.raises(ValueError, match="within the table"):
            host_kernels.move_blocks(lib, X, bad["rows"], bad["u"], bad["v"], bad["c"], g, [2])
