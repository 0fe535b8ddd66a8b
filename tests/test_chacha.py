"""ChaCha20, the generator of all measurement noise: RFC 8439 vectors, and the plain
Python, NumPy and OpenSSL implementations agree (CUDA: tests/test_gpu.py)."""
import numpy as np
import pytest

from gpu_dpsyn.privacy import chacha
from gpu_dpsyn.privacy.chacha import block_of, block_ref, blocks, key_words, keystream, windows

RFC_KEY = key_words(bytes(range(32)))
# RFC 8439 2.3.2: key 00..1f, counter 1, nonce 00:00:00:09:00:00:00:4a:00:00:00:00
RFC_232 = ("10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
           "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
# RFC 8439 A.1: (key, counter, nonce words) -> block
A1 = [
    (bytes(32), 0, (0, 0, 0),
     "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
     "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"),
    (bytes(32), 1, (0, 0, 0),
     "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
     "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f"),
    (bytes(31) + b"\x01", 1, (0, 0, 0),
     "3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a"
     "8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0"),
    (b"\x00\xff" + bytes(30), 2, (0, 0, 0),
     "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca"
     "13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096"),
    (bytes(32), 0, (0, 0, 0x02000000),
     "c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c7"
     "8a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d"),
]


def _hex(words) -> str:
    return b"".join(int(w).to_bytes(4, "little") for w in words).hex()


def test_rfc_8439_block_vector():
    nonce = (0x09000000, 0x4A000000, 0)
    assert _hex(block_ref(RFC_KEY, 1, nonce)) == RFC_232
    assert _hex(blocks(RFC_KEY, np.array([1]), *[np.array([x]) for x in nonce])[:, 0]) == RFC_232
    assert _hex(keystream(RFC_KEY, 1, 1, nonce)[0]) == RFC_232


@pytest.mark.parametrize("key,counter,nonce,want", A1)
def test_rfc_8439_appendix_vectors(key, counter, nonce, want):
    k = key_words(key)
    assert _hex(block_ref(k, counter, nonce)) == want
    assert _hex(blocks(k, np.array([counter]), nonce[0], nonce[1], nonce[2])[:, 0]) == want
    assert _hex(keystream(k, counter, 1, nonce)[0]) == want


def test_numpy_blocks_equal_the_python_reference_for_mixed_counters_and_nonces():
    r = np.random.default_rng(3)
    key = tuple(int(x) for x in r.integers(0, 2 ** 32, 8))
    ctr = r.integers(0, 2 ** 32, 50).astype(np.uint32)
    n0, n1 = r.integers(0, 2 ** 32, 50).astype(np.uint32), r.integers(0, 2 ** 32, 50)
    got = blocks(key, ctr, n0, n1.astype(np.uint32), 77)
    for i in (0, 13, 49):
        assert got[:, i].tolist() == block_ref(key, int(ctr[i]), (int(n0[i]), int(n1[i]), 77))


def test_keystream_equals_numpy_without_openssl(monkeypatch):
    key = tuple(range(10, 18))
    fast = keystream(key, 5, 40, (1, 2, 3))
    monkeypatch.setattr(chacha, "Cipher", None)  # the NumPy fallback
    assert np.array_equal(keystream(key, 5, 40, (1, 2, 3)), fast)


def test_window_layout():
    # block j of element e: counter 4e + j % 4, nonce (j // 4, stream, call)
    key = tuple(range(8))
    w = windows(key, 3, 5, 2, 9, 4)  # window 2 (blocks 8..11) of elements 3..7
    assert w.shape == (5, 64)
    for e in (3, 7):
        for j in (8, 11):
            assert w[e - 3, 16 * (j - 8):16 * (j - 7)].tolist() == block_of(key, e, j, 9, 4)
            assert block_of(key, e, j, 9, 4) == block_ref(key, 4 * e + j % 4, (j // 4, 9, 4))


def test_keystream_refuses_counters_past_32_bits():
    with pytest.raises(ValueError):
        keystream((0,) * 8, 2 ** 32 - 1, 2, (0, 0, 0))
