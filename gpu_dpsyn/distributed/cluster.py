"""The Dask client of a command-line run: a local cluster of N workers, or a scheduler."""
from __future__ import annotations

from contextlib import contextmanager

from gpu_dpsyn.errors import ClusterError, DPSynError

CONNECT_TIMEOUT = "20s"
TIMEOUT_S = 3600.0  # the longest wait for one gather (a pass over every partition)
# Dask starts worker processes with MALLOC_TRIM_THRESHOLD_=65536, which turns off glibc's
# adaptive mmap threshold: every large NumPy temporary is then mapped and faulted in
# anew, and one GUM batch of 5 * 10^5 rows took 17-19 s on a worker instead of 6-7 s
UNSET_TRIM = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


def current_client():
    """The Dask client this process has made current (a Client created here, or entered
    as a context), as Dask users expect it to be used; None when there is none."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:  # no client
        return None


def checked_client(client):
    """client, when it is None or a dask.distributed Client; else a DPSynError (an address
    given where a Client belongs failed deep in a fit, or went unused)."""
    if client is None:
        return None
    from distributed import Client
    if not isinstance(client, Client):
        hint = f"; for a scheduler's address, give Client({client!r})" \
            if isinstance(client, str) else ""
        raise DPSynError(f"client= takes a dask.distributed.Client (or None), got "
                         f"{type(client).__name__}{hint}")
    if client.status in ("closing", "closed"):  # else Dask's ClosedClientError, deep
        raise DPSynError("the Dask client is closed: give an open Client (a Client's "
                         "`with` block closes it on leaving)")
    return client


def local_cluster(workers: int, gpu: bool = False, memory_limit="auto"):
    """workers one-thread worker processes (NumPy), or with gpu a LocalCUDACluster
    (dask-cuda) of one worker per GPU, up to `workers`; memory_limit per worker."""
    import os
    cores = os.cpu_count() or 1
    if not gpu and workers > cores:  # (each a process of one thread: more only contend)
        raise DPSynError(f"--workers {workers} is more than this machine's {cores} cores "
                         f"(a worker is a process of one thread): give at most {cores}")
    import dask
    with dask.config.set(UNSET_TRIM):
        if gpu:
            try:
                from dask_cuda import LocalCUDACluster
            except ImportError:
                raise DPSynError("a GPU run on --workers needs dask-cuda: pip install "
                                 "'gpu_dpsyn[dask-cuda]' (or use --backend cpu)") from None
            return LocalCUDACluster(n_workers=workers, memory_limit=memory_limit,
                                    dashboard_address=":0")
        from dask.distributed import LocalCluster
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                            memory_limit=memory_limit, dashboard_address=":0")


@contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None, gpu: bool = False):
    """A Client for the run, closed (with its local cluster) afterwards: on a
    local_cluster of `workers`, or connected to `scheduler` (tcp://host:8786), whose
    workers must see the input and output paths."""
    from dask.distributed import Client
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, ValueError) as e:  # refused, timed out, a malformed address
            raise DPSynError(f"cannot connect to the Dask scheduler {scheduler!r}: "
                             f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") \
                from None
        with client:
            yield client
        return
    from gpu_dpsyn.distributed.quiet import QuietTaskErrors
    with local_cluster(workers, gpu) as cluster, Client(cluster) as client:
        # this run's own workers, writing to its terminal (a scheduler's are left as they are)
        client.register_plugin(QuietTaskErrors())
        yield client


def wait_for(futures, after: str = "", **kw):
    """distributed.wait with the TIMEOUT_S timeout; ClusterError when it passes (after: what
    the message adds about the state left behind)."""
    from dask.distributed import wait
    try:
        return wait(futures, timeout=TIMEOUT_S, **kw)
    except TimeoutError:
        raise ClusterError(f"the Dask cluster gave no result in {TIMEOUT_S:g} s: a worker "
                           "or the scheduler may have failed (see its logs); the run "
                           f"stopped{after}") from None

