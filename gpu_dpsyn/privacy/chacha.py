"""ChaCha20 block function (RFC 8439, section 2.3) used as a counter-based CSPRNG.

Every random word that measurement noise uses comes from ChaCha20(key, counter,
nonce) with a 256-bit key: secret (os.urandom) unless the user gave a seed.  An
element e (a cell of a marginal) reads a stream of 16-word blocks in windows of four
(WINDOW = 64 words); block j of the stream of (stream id, call) is

    ChaCha20(key, counter=4e + j % 4, nonce=(j // 4, stream, call))

so an element's noise does not depend on how many elements are drawn together, and
window w of consecutive elements is one contiguous keystream (one OpenSSL call).

Three implementations, checked against each other, the RFC vectors and OpenSSL
(through `cryptography`): `block_ref` (plain Python, for the exact reference samplers),
`blocks` (NumPy, many elements at once) and backends/cuda/chacha.cuh (CUDA).
"""
from __future__ import annotations

import numpy as np

try:  # OpenSSL's ChaCha20: the fast path for contiguous keystreams (a dependency)
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
except ImportError:  # pragma: no cover - the NumPy blocks give the same words
    Cipher = None

CONSTANTS = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)  # "expand 32-byte k"
_M32 = 0xFFFFFFFF
# column rounds, then diagonal rounds (RFC 8439, 2.3)
_QROUNDS = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
            (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))


def key_words(key: bytes) -> tuple[int, ...]:
    """A 32-byte key as eight little-endian 32-bit words."""
    if len(key) != 32:
        raise ValueError("a ChaCha20 key has 32 bytes")
    return tuple(int.from_bytes(key[4 * i:4 * i + 4], "little") for i in range(8))


def _initial(key, counter: int, nonce) -> list[int]:
    return [*CONSTANTS, *key, counter & _M32, *(x & _M32 for x in nonce)]


def block_ref(key, counter: int, nonce) -> list[int]:
    """One block as 16 words, in plain Python (the reference the others are tested on)."""
    s = _initial(key, counter, nonce)
    x = list(s)

    def rotl(v, r):
        return ((v << r) | (v >> (32 - r))) & _M32
    for _ in range(10):
        for a, b, c, d in _QROUNDS:
            x[a] = (x[a] + x[b]) & _M32
            x[d] = rotl(x[d] ^ x[a], 16)
            x[c] = (x[c] + x[d]) & _M32
            x[b] = rotl(x[b] ^ x[c], 12)
            x[a] = (x[a] + x[b]) & _M32
            x[d] = rotl(x[d] ^ x[a], 8)
            x[c] = (x[c] + x[d]) & _M32
            x[b] = rotl(x[b] ^ x[c], 7)
    return [(u + v) & _M32 for u, v in zip(x, s)]


def _rotl(x, r, tmp):
    np.left_shift(x, np.uint32(r), out=tmp)
    np.right_shift(x, np.uint32(32 - r), out=x)
    np.bitwise_or(x, tmp, out=x)


def blocks(key, counter, n0, n1, n2) -> np.ndarray:
    """(16, n) uint32: block words for counters and nonce words given per element
    (arrays of one length, or scalars)."""
    counter = np.asarray(counter, dtype=np.uint32)
    n = np.broadcast_shapes(counter.shape, np.shape(n0), np.shape(n1), np.shape(n2))
    n = n[0] if n else 1
    s = np.empty((16, n), dtype=np.uint32)
    s[0:4] = np.array(CONSTANTS, dtype=np.uint32)[:, None]
    s[4:12] = np.array(key, dtype=np.uint32)[:, None]
    for row, v in ((12, counter), (13, n0), (14, n1), (15, n2)):
        s[row] = np.asarray(v, dtype=np.uint32)
    x = s.copy()
    tmp = np.empty(n, dtype=np.uint32)
    for _ in range(10):
        for a, b, c, d in _QROUNDS:  # in place on rows: 1-D ops stay in cache
            xa, xb, xc, xd = x[a], x[b], x[c], x[d]
            for u, v, w, r in ((xa, xb, xd, 16), (xc, xd, xb, 12), (xa, xb, xd, 8),
                               (xc, xd, xb, 7)):  # u += v; w ^= u; w <<<= r
                np.add(u, v, out=u)
                np.bitwise_xor(w, u, out=w)
                _rotl(w, r, tmp)
    x += s
    return x


WINDOW = 64  # words: four blocks


def block_of(key, element: int, j: int, stream: int, call: int) -> list[int]:
    """Block j of an element's stream, in plain Python."""
    return block_ref(key, 4 * element + j % 4, (j // 4, stream, call))


def windows(key, first: int, count: int, w: int, stream: int, call: int) -> np.ndarray:
    """(count, WINDOW) uint32: window w of elements first .. first + count - 1."""
    if first + count > 1 << 30:
        raise ValueError("at most 2^30 elements share a stream")
    return keystream(key, 4 * first, 4 * count, (w, stream, call)).reshape(count, WINDOW)


def keystream(key, first: int, count: int, nonce) -> np.ndarray:
    """(count, 16) uint32: the blocks of counters first .. first + count - 1 under one
    nonce.  OpenSSL's ChaCha20 (the `cryptography` package) when installed, else NumPy."""
    if not (0 <= first and first + count <= 1 << 32):
        raise ValueError("ChaCha20 block counters are 32-bit")
    if Cipher is None:  # pragma: no cover
        return blocks(key, np.arange(first, first + count, dtype=np.uint64), *nonce).T.copy()
    kb = b"".join(int(w).to_bytes(4, "little") for w in key)
    iv = first.to_bytes(4, "little") + b"".join(int(w).to_bytes(4, "little") for w in nonce)
    raw = Cipher(algorithms.ChaCha20(kb, iv), mode=None).encryptor().update(bytes(64 * count))
    return np.frombuffer(raw, dtype="<u4").reshape(count, 16).astype(np.uint32)
