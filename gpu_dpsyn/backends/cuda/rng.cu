// Raw Philox4x32-10 words for counters (c0 + i, c1, c2, c3): the known-answer check and
// any bulk uniform the host side needs.
#include "common.cuh"

extern "C" __global__ void philox_fill(long long n, unsigned int k0, unsigned int k1,
                                       unsigned int c0, unsigned int c1, unsigned int c2,
                                       unsigned int c3, unsigned int* out) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u32x4 w = philox4x32(c0 + (unsigned int)i, c1, c2, c3, k0, k1);
    out[4 * i] = w.x; out[4 * i + 1] = w.y; out[4 * i + 2] = w.z; out[4 * i + 3] = w.w;
}
