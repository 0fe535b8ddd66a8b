// Exact discrete Laplace and discrete Gaussian noise (Canonne, Kamath, Steinke 2020,
// Alg. 1-3), one element per thread, as gpu_dpsyn/privacy/samplers.py: the same words
// in the same order, integers only (unsigned __int128 where the reference's values pass
// 64 bits).  status: 0 done, 1 WIDE (a value outgrew the widths: the host finishes the
// element on unbounded integers), 2 FAIL (out of words: the host raises).
#include "chacha.cuh"
#include "common.cuh"

typedef unsigned __int128 u128;

__device__ inline int bitlen128(u128 x) {
    unsigned long long hi = (unsigned long long)(x >> 64), lo = (unsigned long long)x;
    return hi ? 128 - __clzll(hi) : 64 - __clzll(lo);
}

// words per try and the most significant word's mask, for values in [0, m), m >= 2
__device__ inline void word_layout(u128 m, int& nw, unsigned int& top) {
    int bits = bitlen128(m - 1);
    nw = (bits + 31) / 32;
    int tb = bits - 32 * (nw - 1);
    top = tb == 32 ? 0xFFFFFFFFu : (1u << tb) - 1u;
}

__device__ inline u128 uniform_int(WordStream& w, u128 m) {
    if (m == 1) return 0;
    int nw; unsigned int top;
    word_layout(m, nw, top);
    while (true) {
        u128 u = next_word(w) & top;
        for (int k = 1; k < nw; ++k) u = (u << 32) | next_word(w);
        if (u < m || w.dead) return u;
    }
}

// Bernoulli(n / d), lazily: see samplers.bernoulli
__device__ inline bool bernoulli(WordStream& w, u128 n, u128 d) {
    if (n == 0 || n >= d) return n > 0;
    int nw; unsigned int top;
    word_layout(d, nw, top);
    u128 dm = d - 1, nm = n - 1;
    while (!w.dead) {
        bool below = false, rejected = false;
        int cmp = 0;
        for (int i = 0; i < nw; ++i) {
            int sh = 32 * (nw - 1 - i);
            unsigned int x = next_word(w) & (i == 0 ? top : 0xFFFFFFFFu);
            unsigned int di = (unsigned int)(dm >> sh), ni = (unsigned int)(nm >> sh);
            if (!below) {
                if (x > di) { rejected = true; break; }
                below = x < di;
            }
            if (cmp == 0) cmp = (x > ni) - (x < ni);
            if (below && cmp) return cmp < 0;
        }
        if (!rejected) return cmp <= 0;
    }
    return false;
}

// Bernoulli(exp(-n/d)), n <= d
__device__ inline bool exp_le1(WordStream& w, u128 n, u128 d) {
    unsigned long long k = 1;
    while (!w.dead && bernoulli(w, n, d) && bernoulli(w, 1, k)) ++k;
    return (k & 1ull) != 0;
}

// Bernoulli(exp(-n/d)), any n
__device__ inline bool exp_any(WordStream& w, u128 n, u128 d) {
    while (n > d) {
        if (!exp_le1(w, 1, 1) || w.dead) return false;
        n -= d;
    }
    return exp_le1(w, n, d);
}

// discrete Laplace with scale t/s; X >= 2^63 sets wide
__device__ inline long long laplace(WordStream& w, unsigned long long t, unsigned long long s,
                                    bool& wide) {
    while (!w.dead) {
        u128 u = uniform_int(w, t);
        if (!exp_le1(w, u, t)) continue;
        unsigned long long v = 0;
        while (!w.dead && exp_le1(w, 1, 1)) ++v;
        u128 x = u + (u128)t * v;
        if (x >> 63) { wide = true; return 0; }
        long long y = (long long)((unsigned long long)x / s);
        bool neg = bernoulli(w, 1, 2);
        if (neg && y == 0) continue;
        return neg ? -y : y;
    }
    return 0;
}

__device__ inline void init_stream(WordStream& w, const unsigned int* key, long long i,
                                   unsigned int stream, unsigned int call,
                                   unsigned long long max_words) {
    w.key = key; w.element = (unsigned int)i; w.stream = stream; w.call = call;
    w.pos = 0; w.max_words = max_words; w.dead = false;
}

__device__ inline unsigned char status_of(const WordStream& w, bool wide) {
    return w.dead ? 2 : (wide ? 1 : 0);
}

// N_Z(0, p/q): proposal laplace(t, 1), t = floor(sigma) + 1, accepted with
// exp(-(|Y| q t - p)^2 / den), den = 2 p q t^2
__device__ inline long long gaussian(WordStream& w, unsigned long long t, unsigned long long qt,
                                     unsigned long long p, u128 den, bool& wide) {
    long long y = 0;
    while (!w.dead) {
        y = laplace(w, t, 1, wide);
        if (wide || w.dead) break;
        u128 prod = (u128)(unsigned long long)(y < 0 ? -y : y) * qt;
        u128 a = prod >= p ? prod - p : p - prod;
        if (a >> 64) { wide = true; break; }
        if (exp_any(w, a * a, den)) break;
    }
    return y;
}

// m draws end to end in one launch (a fit's measurements: two reads in all, not two a
// marginal): element i is element i - ends[g - 1] of draw g = upper_bound(ends, m, i),
// drawn with draw g's NOISE_WORDS params: call, 1 for the Gaussian, t, then q t, p,
// den_hi, den_lo (the Gaussian) or s (the Laplace)
#define NOISE_WORDS 7
extern "C" __global__ void noise_draws(long long n, const unsigned int* key,
                                       unsigned int stream, unsigned long long max_words,
                                       long long m, const long long* ends,
                                       const unsigned long long* params, long long* out,
                                       unsigned char* status) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long g = upper_bound(ends, m, i);
    const unsigned long long* q = params + NOISE_WORDS * g;
    WordStream w;
    init_stream(w, key, i - (g ? ends[g - 1] : 0), stream, (unsigned int)q[0], max_words);
    bool wide = false;
    out[i] = q[1] ? gaussian(w, q[2], q[3], q[4], ((u128)q[5] << 64) | q[6], wide)
                  : laplace(w, q[2], q[3], wide);
    status[i] = status_of(w, wide);
}

// raw blocks for counters first + i under one nonce: the RFC 8439 check on the device
extern "C" __global__ void chacha20_blocks(long long n, const unsigned int* key,
                                           unsigned int first, unsigned int n0,
                                           unsigned int n1, unsigned int n2,
                                           unsigned int* out) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    chacha20_block(key, first + (unsigned int)i, n0, n1, n2, out + 16 * i);
}
