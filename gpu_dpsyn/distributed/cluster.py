"""The Dask client of a command-line run: a local cluster of N workers, or a scheduler."""
from __future__ import annotations

from contextlib import contextmanager

from ..errors import DPSynError

CONNECT_TIMEOUT = "20s"


@contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None, gpu: bool = False):
    """A Client for the run, closed (with its local cluster) afterwards.  workers: a
    LocalCluster of that many one-thread worker processes; with gpu, a LocalCUDACluster
    (dask-cuda) of one worker per GPU, up to `workers`.  scheduler: an address such as
    tcp://host:8786, whose workers must see the input and output paths."""
    from dask.distributed import Client, LocalCluster
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
    if gpu:
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            raise DPSynError("a GPU run on --workers needs dask-cuda: pip install "
                             "'gpu_dpsyn[dask-cuda]' (or use --backend cpu)") from None
        cluster = LocalCUDACluster(n_workers=workers, dashboard_address=":0")
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
    with cluster, Client(cluster) as client:
        yield client
