"""Both backends implement every operation of the Backend protocol with its parameters
(the CuPy class is read without a device: its module imports without CuPy)."""
import inspect

import pytest

from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.backends.cuda.ops import CupyBackend
from gpu_dpsyn.backends.numpy.ops import NumpyBackend
from gpu_dpsyn.backends.protocol import Backend

OPERATIONS = [n for n, v in vars(Backend).items() if inspect.isfunction(v) and not n.startswith("_")]


def _required(fn) -> list:
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.default is inspect.Parameter.empty]


def test_the_protocol_lists_the_operations():
    assert {"histogram", "noise_draws", "uniforms", "init_records", "plan_update",
            "gum_apply", "prepare"} <= set(OPERATIONS)


@pytest.mark.parametrize("cls", [NumpyBackend, CupyBackend])
@pytest.mark.parametrize("op", OPERATIONS)
def test_each_backend_has_the_operation_with_its_parameters(cls, op):
    want = inspect.signature(getattr(Backend, op)).parameters
    have = inspect.signature(getattr(cls, op)).parameters
    assert list(have)[:len(want)] == list(want)  # same names, same order
    assert _required(getattr(cls, op)) == _required(getattr(Backend, op))


def test_the_cpu_backend_is_a_backend():
    assert isinstance(get_backend("cpu"), Backend)
    assert NumpyBackend.name == "cpu" and CupyBackend.name == "gpu"
    assert "self.xp = cp" in inspect.getsource(CupyBackend.__init__)  # set with a device
