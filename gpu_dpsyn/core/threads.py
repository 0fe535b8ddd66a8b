"""Data-parallel NumPy on the host's cores (the NumPy backend's sweep and polish).

One operation is split into blocks along an axis that no sum crosses, and each block
does the same element-wise work on its part, so the result is the same bits however the
blocks fall: NumPy releases the GIL in its loops, and on a 2-core machine two blocks of
the sweep's gathers ran 1.65 times as fast as one.  GPU_DPSYN_THREADS=N sets the number
of threads (1: none); the default is the cores this process may use, at most 8.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

MIN_BLOCK = 1 << 16  # elements a block: below, handing it to a thread costs more than it saves
MAX_THREADS = 8
_PREFIX = "gpu_dpsyn"

_pool: tuple[int, ThreadPoolExecutor] | None = None  # (pid, pool): a forked child makes its own
_lock = threading.Lock()  # guards _pool and _busy (short holds: never across a wait)
_busy = 0  # each() calls with blocks on the pool now
_inside = threading.local()  # .block: the calling thread runs one of each()'s blocks now
_cores: int | None = None  # the usable cores, read at first use (a wide fit asked 825,000 times)


def count() -> int:
    """Threads to use: GPU_DPSYN_THREADS, else the usable cores (at most MAX_THREADS),
    as the process's affinity was at the first call (set it before the process starts)."""
    global _cores
    env = os.environ.get("GPU_DPSYN_THREADS", "").strip()
    if env.isascii() and env.isdecimal() and int(env) > 0:
        return int(env)
    if _cores is None:
        try:
            _cores = max(1, min(len(os.sched_getaffinity(0)), MAX_THREADS))
        except AttributeError:  # not on Linux
            _cores = max(1, min(os.cpu_count() or 1, MAX_THREADS))
    return _cores


def blocks(n: int, per_item: int = 1) -> list[tuple[int, int]]:
    """[lo, hi) ranges splitting 0..n into at most count() blocks of MIN_BLOCK elements
    or more (per_item: elements behind each of the n items)."""
    most = n * max(per_item, 1) // MIN_BLOCK
    k = max(1, min(count(), n, most)) if most > 1 else 1  # (count() only where it counts)
    edges = [n * j // k for j in range(k + 1)]
    return list(zip(edges[:-1], edges[1:]))


def each(fn, n: int, per_item: int = 1, parts: list | None = None) -> None:
    """fn(lo, hi) for the blocks of 0..n: the last on the calling thread, which would
    otherwise only wait, the others on the pool's threads (a hand-off to a thread costs
    some 50 us on a 2-core machine, and a fit makes thousands of calls); an exception in
    any block is raised here, once every block is done.  parts: the blocks (default
    blocks(n, per_item)), for work in phases that must fall the same way each time."""
    parts = blocks(n, per_item) if parts is None else parts
    if len(parts) == 1 or threading.current_thread().name.startswith(_PREFIX) or \
            getattr(_inside, "block", False):
        for lo, hi in parts:  # a block that splits again runs its parts itself: waiting
            fn(lo, hi)        # on the pool from inside it could wait for ever
        return
    errors = np.geterr()  # the caller's np.errstate: a new thread starts from the defaults
    ended: list = [None] * (len(parts) - 1)  # each pool block's error, or False once done

    def block(i, lo, hi):
        try:
            with np.errstate(**errors):
                fn(lo, hi)
            ended[i] = False
        except BaseException as e:  # kept here, not in its future: a forked child reads
            ended[i] = e            # this list, never a future's lock (held at the fork?)
    global _busy
    with _lock:
        _busy += 1
        pool = _executor()
    futures, mine, pid = [], None, os.getpid()
    try:
        futures = [pool.submit(block, i, lo, hi) for i, (lo, hi) in enumerate(parts[:-1])]
        _inside.block = True
        try:
            fn(*parts[-1])
        except BaseException as e:  # raised after the others' (the first block's first)
            mine = e
        finally:
            _inside.block = False
            if os.getpid() == pid:
                wait(futures)  # every block done before an error is raised: none still writes
    finally:
        with _lock:
            if os.getpid() == pid:  # a forked child counts from 0 (_in_child)
                _busy -= 1
    if any(e is None for e in ended):  # a child forked in the caller's block: the parent's
        raise RuntimeError(            # blocks still running have no threads here
            "a process forked inside threads.each returned into it before the other "
            "blocks were done; they ran in the parent") from mine
    for e in ended:
        if e is not False:
            raise e
    if mine is not None:
        raise mine


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None or _pool[0] != os.getpid():
        _pool = (os.getpid(), ThreadPoolExecutor(count(), thread_name_prefix=_PREFIX))
    return _pool[1]


def _before_fork() -> None:
    """Join the idle pool's threads before a fork: a child forked from a multi-threaded
    process may deadlock (Python 3.12 warns).  The next blocks start a new pool.  A pool
    with blocks in flight (a fork from another thread meanwhile) is left to them."""
    global _pool
    with _lock:
        if _pool is not None and _busy == 0:
            if _pool[0] == os.getpid():
                _pool[1].shutdown(wait=True)
            _pool = None


def _in_child() -> None:
    """A forked child starts with no pool, nothing in flight, a fresh lock (another
    thread of the parent may have held it at the fork) and no caller's block running."""
    global _pool, _busy, _lock, _inside, _cores
    _pool, _busy, _lock, _inside = None, 0, threading.Lock(), threading.local()
    _cores = None  # its affinity may be set anew (a pool's initializer): read it again


os.register_at_fork(before=_before_fork, after_in_child=_in_child)
