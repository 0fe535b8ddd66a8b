import numpy as np
import pytest

from gpu_dpsyn.core import rng
from gpu_dpsyn.errors import DPSynError
from gpu_dpsyn.core.philox import philox4x32, uniform

# Random123 known-answer vectors for philox4x32-10: (key, counter) -> output
KAT = [
    ((0, 0), (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF,) * 4, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0xA4093822, 0x299F31D0), (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("key,ctr,want", KAT)
def test_philox_known_answers(key, ctr, want):
    got = philox4x32(key, *ctr)
    assert tuple(int(x) for x in got) == want


def test_philox_vectorized_equals_scalar():
    ctr = np.arange(100, dtype=np.uint64) * 7919
    vec = philox4x32((5, 6), ctr, 3, 2, 1)
    for i in (0, 17, 99):
        one = philox4x32((5, 6), int(ctr[i]), 3, 2, 1)
        assert all(int(v[i]) == int(o) for v, o in zip(vec, one))


def test_uniform_is_open_interval():
    u = uniform(np.array([0, 0xFFFFFFFF], dtype=np.uint32))
    assert 0 < u[0] < 1e-9 and 1 - 1e-9 < u[1] < 1


def test_make_seed():
    assert rng.make_seed(42) == 42 and rng.make_seed(np.int64(3)) == 3
    a, b = rng.make_seed(None), rng.make_seed(None)
    assert a != b  # drawn from os.urandom
    assert rng.make_seed(2 ** 64 - 1) == 2 ** 64 - 1
    for bad in (-1, 2 ** 64, 2 ** 64 + 5, 1.5, True):  # 2^64 + 5 used to alias 5
        with pytest.raises(DPSynError, match=r"\[0, 2\^64\)"):
            rng.make_seed(bad)
    assert rng.split_key((7 << 32) | 9) == (9, 7)


@pytest.mark.parametrize("total", [1, 2, 3, 17, 1000, 65537])
def test_feistel_ranks_are_a_bijection(total):
    from gpu_dpsyn.backends.numpy.permute import feistel_ranks, round_keys
    j, size, salt = np.arange(total), np.full(total, total), np.zeros(total, np.int64)
    p = feistel_ranks(j, size, salt, round_keys((1, 2), 5, 0))
    assert np.array_equal(np.sort(p), j)
    if total >= 1000:  # and looks random: few fixed points, no long identity runs
        assert np.mean(p == j) < 0.01
        assert abs(np.corrcoef(p, j)[0, 1]) < 0.1
        assert not np.array_equal(p, feistel_ranks(j, size, salt, round_keys((1, 2), 6, 0)))


def test_feistel_ranks_are_bijections_per_cell():
    from gpu_dpsyn.backends.numpy.permute import feistel_ranks, half_bits, round_keys
    keys = round_keys((3, 4), 1, 0)
    for size in (1, 2, 3, 5, 64, 65, 1000):
        for salt in (0, 7):
            p = feistel_ranks(np.arange(size), np.full(size, size), np.full(size, salt), keys)
            assert np.array_equal(np.sort(p), np.arange(size))
    big = feistel_ranks(np.arange(1000), np.full(1000, 1000), np.full(1000, 1), keys)
    other = feistel_ranks(np.arange(1000), np.full(1000, 1000), np.full(1000, 2), keys)
    assert not np.array_equal(big, other)  # the salt (the cell) changes the permutation
    assert half_bits([1, 2, 4, 5, 16, 17, 2 ** 40 + 1]).tolist() == [1, 1, 1, 2, 2, 3, 21]
