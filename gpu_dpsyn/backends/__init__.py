"""Backend selection: one interface, a NumPy body and a CuPy body.

A backend owns the record matrix (a list of 1-D code arrays on its device) and
implements the data-parallel operations: histogram, noise, record init and the
GUM record update.  Everything cell-level (marginal planning, consistency) is
written against the backend's array module `xp` and shared.
"""
from __future__ import annotations

from gpu_dpsyn.errors import BackendError

BACKENDS = ("auto", "cpu", "gpu")


def gpu_available() -> bool:
    """True when CuPy imports and sees a CUDA device (False, not an error, otherwise)."""
    try:
        import cupy  # noqa: F401
    except Exception:
        return False
    try:
        return bool(cupy.is_available())
    except Exception:
        return False


def get_backend(name: str = "auto"):
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}; choose one of {BACKENDS}")
    if name == "auto":
        name = "gpu" if gpu_available() else "cpu"
    if name == "gpu":
        if not gpu_available():
            raise BackendError("backend='gpu' needs CuPy and a CUDA device; none was found "
                               "(install the 'gpu' extra, or use backend='cpu' or 'auto')")
        from gpu_dpsyn.backends.cuda.ops import CupyBackend
        return CupyBackend()
    from gpu_dpsyn.backends.numpy.ops import NumpyBackend
    return NumpyBackend()
