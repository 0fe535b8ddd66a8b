"""The NumPy backend's blocks on the host's cores (core/threads.py): the same bytes
however the work is split."""
import contextlib

import numpy as np
import pytest

from conftest import small_table
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.core import threads


@pytest.fixture(autouse=True)
def _own_pool():
    """Each test starts its pools and leaves none behind, sized by its setting."""
    threads._before_fork()
    yield
    threads._before_fork()


def _fresh_pool(monkeypatch, n_threads: int, min_block: int = 1) -> None:
    """A fresh pool of n_threads threads, calls split down to blocks of min_block."""
    monkeypatch.setenv("GPU_DPSYN_THREADS", str(n_threads))
    monkeypatch.setattr(threads, "MIN_BLOCK", min_block)
    threads._before_fork()  # a fresh pool, sized by the setting


def _run(monkeypatch, n_threads: int, min_block: int):
    _fresh_pool(monkeypatch, n_threads, min_block)
    assert len(threads.blocks(3000, 12)) == max(1, min(n_threads, 3000 * 12 // min_block))
    df, schema = small_table(3000, seed=4)
    syn = Synthesizer(1.0, 1e-9, seed=5, backend="cpu", progress=False)
    return syn.fit(df, schema).sample(3000)


def test_split_work_gives_the_same_table(monkeypatch):
    one = _run(monkeypatch, 1, threads.MIN_BLOCK)
    for n, block in ((3, 1), (2, 7), (5, 1000)):  # blocks of every size, uneven ones
        got = _run(monkeypatch, n, block)
        assert got.equals(one), (n, block)


def test_blocks_cover_the_range_once():
    for n in (1, 2, 7, 100, 12345):
        for per in (1, 1000, 1 << 20):
            b = threads.blocks(n, per)
            assert b[0][0] == 0 and b[-1][1] == n
            assert all(hi > lo for lo, hi in b) and all(a[1] == c[0] for a, c in zip(b, b[1:]))
            assert len(b) <= threads.count()


def test_an_error_in_a_block_is_raised(monkeypatch):
    _fresh_pool(monkeypatch, 3)
    seen = []

    def work(lo, hi):
        seen.append((lo, hi))
        if lo > 0:
            raise ValueError("block failed")
    with pytest.raises(ValueError, match="block failed"):
        threads.each(work, 9)
    assert sorted(seen) == [(0, 3), (3, 6), (6, 9)]


def test_the_thread_count_setting(monkeypatch):
    monkeypatch.delenv("GPU_DPSYN_THREADS", raising=False)
    default = threads.count()
    assert 1 <= default <= threads.MAX_THREADS
    for value, want in (("1", 1), ("4", 4), ("0", default), ("x", default), ("", default)):
        monkeypatch.setenv("GPU_DPSYN_THREADS", value)
        assert threads.count() == want


def test_a_block_that_splits_again_runs_its_parts_itself(monkeypatch):
    # nested on a pool of 2 whose threads all wait for inner blocks: it would hang
    _fresh_pool(monkeypatch, 2)
    out = [0] * 16

    def inner(lo, hi):
        for i in range(lo, hi):
            out[i] += 1

    def outer(lo, hi):
        threads.each(lambda a, b: inner(lo + a, lo + b), hi - lo)
    threads.each(outer, 16)
    assert out == [1] * 16


def test_blocks_keep_the_callers_numpy_error_state_and_all_finish(monkeypatch):
    import time
    import numpy as np
    _fresh_pool(monkeypatch, 3)

    def underflow(lo, hi):
        np.float64(1e-300) * np.float64(1e-300)
    with np.errstate(under="raise"), pytest.raises(FloatingPointError):
        threads.each(underflow, 9)
    done = []

    def slow(lo, hi):
        if lo == 0:
            raise ValueError("first")
        time.sleep(0.05)
        done.append(lo)
    with pytest.raises(ValueError, match="first"):
        threads.each(slow, 9)
    assert sorted(done) == [3, 6]  # the others had finished, not still writing
    monkeypatch.setenv("GPU_DPSYN_THREADS", "²")
    assert threads.count() >= 1


def test_the_caller_runs_one_block_and_its_inner_blocks_itself(monkeypatch):
    import threading
    _fresh_pool(monkeypatch, 3)
    me, ran = threading.current_thread(), {}

    def inner(lo, hi):
        ran.setdefault(threading.current_thread(), []).append(("inner", lo, hi))

    def outer(lo, hi):
        ran.setdefault(threading.current_thread(), []).append(("outer", lo, hi))
        threads.each(inner, 4)
    threads.each(outer, 9)
    assert [x for x in ran[me] if x[0] == "outer"] == [("outer", 6, 9)]  # the last block
    for who, done in ran.items():  # every block's inner blocks on its own thread
        assert len([x for x in done if x[0] == "inner"]) == \
            3 * len([x for x in done if x[0] == "outer"]), who
        assert who is me or who.name.startswith(threads._PREFIX)
    assert not getattr(threads._inside, "block", False)  # cleared after the call


def test_an_error_in_the_callers_block_waits_for_the_others(monkeypatch):
    import time
    _fresh_pool(monkeypatch, 3)
    done = []

    def work(lo, hi):
        if hi == 9:  # the caller's block
            raise ValueError("last")
        time.sleep(0.05)
        done.append(lo)
    with pytest.raises(ValueError, match="last"):
        threads.each(work, 9)
    assert sorted(done) == [0, 3]  # finished before the error reached the caller
    assert not getattr(threads._inside, "block", False)

    def both(lo, hi):
        if lo in (3, 6):  # a pool's block and the caller's
            raise ValueError(f"block {lo}")
    with pytest.raises(ValueError, match="block 3"):  # the first block's error, as before
        threads.each(both, 9)


def test_a_child_forked_in_the_callers_block_runs_blocks_again(monkeypatch):
    import os
    import threading
    _fresh_pool(monkeypatch, 2)
    pids = []

    def work(lo, hi):
        if hi == 4 and not pids:  # the caller's block
            pid = os.fork()
            if pid == 0:
                ran = set()
                threads.each(lambda a, b: ran.add(threading.current_thread().name), 4)
                pooled = any(x.startswith(threads._PREFIX) for x in ran)
                os._exit(0 if pooled and not getattr(threads._inside, "block", False) else 1)
            pids.append(pid)
    threads.each(work, 4)
    assert os.waitpid(pids[0], 0)[1] == 0



@pytest.mark.parametrize("others_done", [False, True])
def test_a_child_forked_in_the_callers_block_that_returns_into_each(monkeypatch,
                                                                     others_done):
    """The parent's other blocks cannot finish in the child (their threads are not
    there): a child that returns into each() while one is still running raises at once
    rather than wait for ever; once they were done before the fork, it has their work."""
    import os
    import signal
    import time
    import types
    _fresh_pool(monkeypatch, 2)
    pids, out, futures = [], np.zeros(4), []
    executor = threads._executor
    monkeypatch.setattr(threads, "_executor", lambda: types.SimpleNamespace(
        submit=lambda *a: futures.append(executor().submit(*a)) or futures[-1]))

    def work(lo, hi):
        if lo == 0:  # the pool's block
            if not others_done:
                time.sleep(0.5)
            out[lo:hi] = 1
        elif not pids:  # the caller's block: the child returns into each()
            if others_done:  # the pool's block wholly done, its future too
                futures[0].result(timeout=10)
            out[lo:hi] = 1
            pid = os.fork()
            if pid == 0:
                signal.alarm(20)  # a child that waits is killed: the test fails, not hangs
            else:
                pids.append(pid)
    try:
        threads.each(work, 4)
    except BaseException as e:
        if not pids:  # the child: never back into pytest
            os._exit(0 if not others_done and isinstance(e, RuntimeError) and
                     "forked" in str(e) else 1)
        raise
    if not pids:  # the child
        os._exit(0 if others_done and out.all() and threads._busy == 0 else 1)
    assert os.waitpid(pids[0], 0)[1] == 0 and out.all()


def _pool_threads():
    import threading
    return [t for t in threading.enumerate() if t.name.startswith(threads._PREFIX)]


def test_no_pool_thread_is_alive_when_the_process_forks(monkeypatch):
    """Python 3.12 warns at a fork from a multi-threaded process (the child may deadlock):
    the idle pool's threads are joined before a fork, and the next blocks start a new
    pool."""
    import os
    import sys
    import warnings
    monkeypatch.setenv("GPU_DPSYN_THREADS", "3")
    monkeypatch.setattr(threads, "MIN_BLOCK", 1)
    out = np.zeros(9)
    threads.each(lambda lo, hi: out.__setitem__(slice(lo, hi), 1.0), 9)
    assert _pool_threads()  # the pool outlives the call, for the next ones
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # 3.12's multi-threaded fork
        pid = os.fork()
        if pid == 0:
            os._exit(0 if not _pool_threads() else 1)
        assert os.waitpid(pid, 0)[1] == 0
    assert not _pool_threads()  # joined before the fork: none in the parent either
    threads.each(lambda lo, hi: out.__setitem__(slice(lo, hi), 2.0), 9)
    assert (out == 2.0).all() and _pool_threads()
    assert sys.version_info >= (3, 8)


@contextlib.contextmanager
def _blocks_in_flight(monkeypatch):
    """Another thread's each() with a block held running until the with-block ends;
    yields that thread (joined at the end)."""
    import threading
    monkeypatch.setenv("GPU_DPSYN_THREADS", "2")
    monkeypatch.setattr(threads, "MIN_BLOCK", 1)
    started, release = threading.Event(), threading.Event()

    def work(lo, hi):
        if lo == 0:
            started.set()
            release.wait(10)
    caller = threading.Thread(target=threads.each, args=(work, 4))
    caller.start()
    started.wait(10)
    try:
        yield caller
    finally:
        release.set()
        caller.join(10)


def test_a_fork_while_blocks_run_leaves_the_pool_to_them(monkeypatch):
    with _blocks_in_flight(monkeypatch) as caller:
        threads._before_fork()  # blocks in flight: the pool stays, they finish
    assert not caller.is_alive() and _pool_threads()


def test_a_child_forked_while_blocks_run_starts_clean(monkeypatch):
    """Another thread's blocks in flight at the fork: the child has no pool, nothing in
    flight and a lock it can take."""
    import os
    with _blocks_in_flight(monkeypatch):
        pid = os.fork()
        if pid == 0:
            ok = threads._busy == 0 and threads._pool is None and \
                threads._lock.acquire(timeout=5)
            if ok:
                threads._lock.release()
            out = np.zeros(4)
            threads.each(lambda lo, hi: out.__setitem__(slice(lo, hi), 1.0), 4)
            os._exit(0 if ok and (out == 1.0).all() else 1)
    assert os.waitpid(pid, 0)[1] == 0


def test_the_usable_cores_are_read_once_not_on_every_call(monkeypatch):
    # a wide fit called count() 825,000 times, each asking the kernel for its affinity
    import os
    calls = []
    real = getattr(os, "sched_getaffinity", None)
    monkeypatch.delenv("GPU_DPSYN_THREADS", raising=False)
    monkeypatch.setattr(threads, "_cores", None)
    monkeypatch.setattr(os, "sched_getaffinity",
                        lambda pid: calls.append(pid) or (real(pid) if real else {0}),
                        raising=False)
    first = threads.count()
    assert [threads.count() for _ in range(5)] == [first] * 5 and len(calls) == 1
    monkeypatch.setenv("GPU_DPSYN_THREADS", "3")  # the setting is still read on each call
    assert threads.count() == 3
    for name in ("_pool", "_busy", "_lock", "_inside"):  # put back after _in_child
        monkeypatch.setattr(threads, name, getattr(threads, name))
    monkeypatch.delenv("GPU_DPSYN_THREADS")
    threads._in_child()  # a forked child (its affinity may be set anew) reads its own
    assert threads.count() == first and len(calls) == 2


def test_blocks_of_too_few_elements_do_not_ask_the_thread_count(monkeypatch):
    # one block under MIN_BLOCK elements whatever the count: a 1,000-row fit called
    # count() 825,000 times for nothing
    monkeypatch.setattr(threads, "count", lambda: pytest.fail("count() asked"))
    assert threads.blocks(threads.MIN_BLOCK - 1) == [(0, threads.MIN_BLOCK - 1)]
    assert threads.blocks(1000, per_item=65) == [(0, 1000)]
    assert threads.blocks(0) == [(0, 0)]
