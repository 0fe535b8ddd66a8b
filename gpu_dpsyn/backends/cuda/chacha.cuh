// ChaCha20 block function (RFC 8439, 2.3) and an element's word stream, as
// gpu_dpsyn/privacy/chacha.py: block j of element e of (stream, call) is
// ChaCha20(key, counter = 4e + j % 4, nonce = (j / 4, stream, call)).
#pragma once

__device__ __forceinline__ unsigned int rotl32(unsigned int x, int r) {
    return (x << r) | (x >> (32 - r));
}

#define CHACHA_QR(a, b, c, d)                       \
    x[a] += x[b]; x[d] = rotl32(x[d] ^ x[a], 16);   \
    x[c] += x[d]; x[b] = rotl32(x[b] ^ x[c], 12);   \
    x[a] += x[b]; x[d] = rotl32(x[d] ^ x[a], 8);    \
    x[c] += x[d]; x[b] = rotl32(x[b] ^ x[c], 7);

__device__ inline void chacha20_block(const unsigned int* key, unsigned int counter,
                                      unsigned int n0, unsigned int n1, unsigned int n2,
                                      unsigned int* out) {
    unsigned int s[16] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u,
                          key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
                          counter, n0, n1, n2};
    unsigned int x[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) x[i] = s[i];
#pragma unroll 1
    for (int r = 0; r < 10; ++r) {
        CHACHA_QR(0, 4, 8, 12) CHACHA_QR(1, 5, 9, 13) CHACHA_QR(2, 6, 10, 14)
        CHACHA_QR(3, 7, 11, 15) CHACHA_QR(0, 5, 10, 15) CHACHA_QR(1, 6, 11, 12)
        CHACHA_QR(2, 7, 8, 13) CHACHA_QR(3, 4, 9, 14)
    }
#pragma unroll
    for (int i = 0; i < 16; ++i) out[i] = x[i] + s[i];
}

// one element's words; past max_words it is dead (returns 0, the sampler fails closed)
struct WordStream {
    const unsigned int* key;
    unsigned int element, stream, call;
    unsigned long long pos, max_words;
    bool dead;
    unsigned int buf[16];
};

__device__ inline unsigned int next_word(WordStream& w) {
    if (w.pos >= w.max_words) { w.dead = true; return 0u; }
    unsigned long long j = w.pos >> 4;
    if ((w.pos & 15ull) == 0ull)
        chacha20_block(w.key, 4u * w.element + (unsigned int)(j & 3ull),
                       (unsigned int)(j >> 2), w.stream, w.call, w.buf);
    return w.buf[w.pos++ & 15ull];
}
