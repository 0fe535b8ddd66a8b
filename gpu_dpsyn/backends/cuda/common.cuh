// Shared device helpers: Philox4x32-10, uniforms, code load/store, Feistel permutation.
// Every formula here mirrors gpu_dpsyn/core/philox.py and gpu_dpsyn/backends/numpy/permute.py bit for bit.
#pragma once

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

// stream ids, as in gpu_dpsyn/rng.py
#define STREAM_INIT 2u
#define STREAM_GUM_SORT 3u
#define STREAM_GUM_SLOT 4u

struct u32x4 { unsigned int x, y, z, w; };

__device__ __forceinline__ u32x4 philox4x32(unsigned int c0, unsigned int c1, unsigned int c2,
                                            unsigned int c3, unsigned int k0, unsigned int k1) {
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        if (r) { k0 += PHILOX_W0; k1 += PHILOX_W1; }
        unsigned int hi0 = __umulhi(PHILOX_M0, c0), lo0 = PHILOX_M0 * c0;
        unsigned int hi1 = __umulhi(PHILOX_M1, c2), lo1 = PHILOX_M1 * c2;
        unsigned int n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    }
    u32x4 out = {c0, c1, c2, c3};
    return out;
}

// uint32 -> (0, 1); the same double arithmetic as core.philox.uniform
__device__ __forceinline__ double u01(unsigned int w) {
    return ((double)w + 0.5) * (1.0 / 4294967296.0);
}

// records are columns of uint8 / uint16 / uint32 codes
__device__ __forceinline__ unsigned int load_code(unsigned long long p, int size, long long i) {
    if (size == 1) return ((const unsigned char*)p)[i];
    if (size == 2) return ((const unsigned short*)p)[i];
    return ((const unsigned int*)p)[i];
}

__device__ __forceinline__ void store_code(unsigned long long p, int size, long long i,
                                           unsigned int v) {
    if (size == 1) ((unsigned char*)p)[i] = (unsigned char)v;
    else if (size == 2) ((unsigned short*)p)[i] = (unsigned short)v;
    else ((unsigned int*)p)[i] = v;
}

// lowbias32 hash, the Feistel round function
__device__ __forceinline__ unsigned int hash32(unsigned int x) {
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
    return x;
}

__device__ __forceinline__ unsigned long long feistel(unsigned long long x, int h,
                                                      const unsigned int* keys,
                                                      unsigned int salt) {
    unsigned long long mask = (1ull << h) - 1ull;
    unsigned long long left = x >> h, right = x & mask;
#pragma unroll
    for (int r = 0; r < 4; ++r) {
        unsigned int rk = hash32(keys[r] ^ salt);
        unsigned long long t = right;
        right = left ^ ((unsigned long long)hash32((unsigned int)right ^ rk) & mask);
        left = t;
    }
    return (left << h) | right;
}

// pi(j) for a bijection pi of [0, total) chosen by (keys, salt): cycle-walk a Feistel
// network on 2h bits, h = ceil(max(2, bit_length(total - 1)) / 2)
__device__ __forceinline__ long long feistel_perm(long long j, long long total,
                                                  const unsigned int* keys, unsigned int salt) {
    int b = 64 - __clzll((unsigned long long)(total - 1));
    if (b < 2) b = 2;
    int h = (b + 1) / 2;
    unsigned long long y = feistel((unsigned long long)j, h, keys, salt);
    while (y >= (unsigned long long)total) y = feistel(y, h, keys, salt);
    return (long long)y;
}

// a grid-stride loop: element i of 0 .. n - 1, each thread every gridDim x blockDim
#define GRID_STRIDE(i, n)                                                            \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n);    \
         i += (long long)gridDim.x * blockDim.x)

// first index c in [0, n) with cum[c] > j (cum non-decreasing)
__device__ __forceinline__ long long upper_bound(const long long* cum, long long n, long long j) {
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (cum[mid] > j) hi = mid; else lo = mid + 1;
    }
    return lo;
}
