"""A CuPy stand-in that counts: kernel launches and device-to-host reads, per stage.

The emulated backend (emulate.py) runs the real kernels on NumPy arrays.  Here those
arrays are DeviceArray, an ndarray subclass that tallies what CuPy would do with them:
- a launch for every ufunc call or reduction, every array function (concatenate, where,
  cumsum, sort, ...), every gather or scatter by an index array, astype and copy, and
  every kernel of the .cu files;
- a sync (the host waits for the device and reads from it) for float(), int(), bool(),
  item(), tolist(), iterating, cupy.asnumpy, and for the operations whose output shape
  depends on the data, which CuPy can only size by reading the device: nonzero,
  flatnonzero, unique, boolean-mask gathers and scatters, repeat by counts, and
  bincount (which reads the maximum, and the minimum to check for negatives: two).
A stage is whatever label `COUNT.stage` holds; tests set it around the pipeline's steps.
"""
from __future__ import annotations

import collections
import contextlib
import types

import numpy as np

from cuda_emu import emulate


class Counter:
    def __init__(self):
        self.stage = "other"
        self.launches = collections.Counter()
        self.syncs = collections.Counter()
        self.why = collections.Counter()  # (stage, what) -> syncs

    def launch(self, k: int = 1) -> None:
        self.launches[self.stage] += k

    def sync(self, what: str, k: int = 1) -> None:
        self.syncs[self.stage] += k
        self.why[(self.stage, what)] += k

    @contextlib.contextmanager
    def at(self, stage: str):
        before, self.stage = self.stage, stage
        try:
            yield
        finally:
            self.stage = before


COUNT = Counter()


def _plain(x):
    if isinstance(x, DeviceArray):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _device(x):
    """Results back as DeviceArray; a NumPy scalar as a 0-d array, as CuPy returns."""
    if isinstance(x, DeviceArray):
        return x
    if isinstance(x, np.ndarray):
        return x.view(DeviceArray)
    if isinstance(x, np.generic):
        return np.asarray(x).view(DeviceArray)
    if isinstance(x, tuple):
        return tuple(_device(v) for v in x)
    if isinstance(x, list):
        return [_device(v) for v in x]
    return x


# output shape read off the data: CuPy syncs to size it (bincount: max and min)
DATA_SHAPED = {np.nonzero: 1, np.flatnonzero: 1, np.unique: 1, np.argwhere: 1,
               np.compress: 1, np.extract: 1, np.bincount: 2}
VIEWS = {np.reshape, np.ravel, np.transpose, np.moveaxis, np.swapaxes, np.squeeze,
         np.expand_dims, np.atleast_1d, np.atleast_2d, np.shape, np.ndim, np.size}


def _is_mask(idx) -> bool:
    parts = idx if isinstance(idx, tuple) else (idx,)
    return any(isinstance(p, np.ndarray) and p.dtype == bool and p.ndim > 0 for p in parts)


def _is_gather(idx) -> bool:
    parts = idx if isinstance(idx, tuple) else (idx,)
    return any(isinstance(p, (np.ndarray, list)) for p in parts)


class DeviceArray(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kw):
        COUNT.launch()
        if method == "at":
            ufunc.at(*_plain(inputs), **kw)
            return None
        if out is not None:
            kw["out"] = tuple(_plain(o) for o in out)
        res = getattr(ufunc, method)(*_plain(inputs), **kw)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _device(res)

    def __array_function__(self, func, types_, args, kwargs):
        if func not in VIEWS:
            COUNT.launch()
        if func in DATA_SHAPED:
            COUNT.sync(func.__name__, DATA_SHAPED[func])
        if func is np.repeat and isinstance(args[1] if len(args) > 1 else kwargs.get(
                "repeats"), np.ndarray):
            COUNT.sync("repeat by counts")
        return _device(func(*_plain(args), **_plain(kwargs)))

    def __getitem__(self, idx):
        if _is_mask(_plain(idx)):
            COUNT.sync("mask gather")
        if _is_gather(_plain(idx)):
            COUNT.launch()
        res = np.ndarray.__getitem__(self.view(np.ndarray), _plain(idx))
        return _device(res)

    def __setitem__(self, idx, value):
        if _is_mask(_plain(idx)):
            COUNT.sync("mask scatter")
        COUNT.launch()
        np.ndarray.__setitem__(self.view(np.ndarray), _plain(idx), _plain(value))

    def astype(self, *a, **k):
        COUNT.launch()
        return _device(self.view(np.ndarray).astype(*a, **k))

    def copy(self, *a, **k):
        COUNT.launch()
        return _device(self.view(np.ndarray).copy(*a, **k))

    # reads: the host waits for the device
    def _read(self, what):
        COUNT.sync(what)
        return self.view(np.ndarray)

    def __float__(self):
        return float(self._read("float()"))

    def __int__(self):
        return int(self._read("int()"))

    def __index__(self):
        return self._read("index").__index__()

    def __bool__(self):
        return bool(self._read("bool()"))

    def item(self, *a):
        return self._read("item()").item(*a)

    def tolist(self):
        return self._read("tolist()").tolist()

    def __iter__(self):  # CuPy yields views along the first axis: no read until a
        return iter([_device(x) for x in self.view(np.ndarray)])  # scalar is taken

    def get(self):
        return np.array(self._read("get()"))


def _creator(fn):
    def make(*a, **k):
        COUNT.launch()
        return _device(fn(*_plain(a), **_plain(k)))
    return make


def counting_cupy():
    """The fake cupy module of emulate.py, its arrays DeviceArray."""
    fake = emulate._fake_cupy()
    for name in ("zeros", "ones", "empty", "full", "arange", "zeros_like", "ones_like",
                 "empty_like", "full_like", "linspace", "eye"):
        setattr(fake, name, _creator(getattr(np, name)))

    def asarray(x, dtype=None):
        if isinstance(x, DeviceArray):
            return x if dtype is None or x.dtype == dtype else x.astype(dtype)
        return np.array(x, dtype=dtype, copy=True).view(DeviceArray)  # host to device

    def asnumpy(x):
        if isinstance(x, DeviceArray):
            COUNT.sync("asnumpy")
            return np.array(x.view(np.ndarray))
        return np.asarray(x)
    fake.asarray, fake.asnumpy = asarray, asnumpy

    def ascontiguousarray(x, dtype=None):
        if not isinstance(x, DeviceArray):  # as CuPy: a host array is refused, not copied
            raise TypeError(f"Argument 'a' has incorrect type (expected a device array, "
                            f"got {type(x).__name__})")
        return _device(np.ascontiguousarray(_plain(x), dtype=dtype))
    fake.ascontiguousarray = ascontiguousarray
    fake.ndarray = DeviceArray
    return fake


class _CountedKernel:
    def __init__(self, kernel):
        self.kernel = kernel

    def __call__(self, grid, block, args, shared_mem=0):
        COUNT.launch()
        return self.kernel(grid, block, tuple(_plain(a) for a in args), shared_mem)


def counting_backend(monkeypatch, so):
    """emulate.emulated_backend with DeviceArray arrays and counted kernels."""
    be = emulate.emulated_backend(monkeypatch, so)
    fake = counting_cupy()
    from gpu_dpsyn.backends.cuda import launch
    real_kernel = launch.kernel
    emulate.set_everywhere(monkeypatch, "cp", fake)
    emulate.set_everywhere(monkeypatch, "kernel", lambda module, name: _CountedKernel(
        real_kernel(module, name)))
    emulate.set_everywhere(monkeypatch, "ptr", lambda a: a.view(np.ndarray).ctypes.data)
    be.xp = fake
    return be


def staged(monkeypatch, module, name: str, stage: str) -> None:
    """module.name counted as `stage` while it runs."""
    real = getattr(module, name)

    def wrapped(*a, **k):
        with COUNT.at(stage):
            return real(*a, **k)
    monkeypatch.setattr(module, name, wrapped)


def reset() -> Counter:
    global COUNT
    COUNT.__init__()
    return COUNT


__all__ = ["COUNT", "DeviceArray", "counting_backend", "staged", "reset", "types"]
