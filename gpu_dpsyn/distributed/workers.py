"""What a worker process keeps and reports: its backend, its memory."""
from __future__ import annotations

from gpu_dpsyn.backends import get_backend

_BACKENDS: dict = {}


def worker_backend(name: str):
    """This process's backend for `name` ('auto' resolves on the worker: a GPU worker
    counts and samples on its device), built once: a CuPy backend loads its kernels."""
    if name not in _BACKENDS:
        _BACKENDS[name] = get_backend(name)
    return _BACKENDS[name]


def worker_memory(backend: str, dask_worker=None) -> dict:
    """Configured sizes, not what is free now (that changes from run to run, and the batch
    size must not): the worker's memory limit (else the machine's memory within the
    process's cgroup, a container's limit), its threads, and its GPU's memory when its
    backend is the GPU."""
    limit = getattr(getattr(dask_worker, "memory_manager", None), "memory_limit", None)
    if not limit:  # this process, or a worker without a limit: as Dask's "auto" limit, the
        from distributed.system import memory_limit  # machine's within its cgroup
        limit = memory_limit()
    be = worker_backend(backend)
    device = None
    if be.name == "gpu":
        import cupy
        device = int(cupy.cuda.Device().mem_info[1])
    return {"host": int(limit), "device": device,
            "threads": dask_worker.state.nthreads if dask_worker is not None else 1}
