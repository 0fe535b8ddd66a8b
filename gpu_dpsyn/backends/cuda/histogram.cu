// Fused joint cell index + histogram of one marginal (up to 3 attributes).
// cell = sum(code_a * stride_a); small domains count in shared memory per block
// (privatized), large domains with global atomics.
#include "common.cuh"

struct Marg {
    unsigned long long p0, p1, p2;  // column pointers
    int s0, s1, s2;                 // element sizes (bytes)
    long long st0, st1, st2;        // strides
    int k;                          // number of attributes
};

__device__ __forceinline__ long long cell_of(long long i, unsigned long long p0, int s0,
                                             long long st0, unsigned long long p1, int s1,
                                             long long st1, unsigned long long p2, int s2,
                                             long long st2, int k) {
    long long c = (long long)load_code(p0, s0, i) * st0;
    if (k > 1) c += (long long)load_code(p1, s1, i) * st1;
    if (k > 2) c += (long long)load_code(p2, s2, i) * st2;
    return c;
}

extern "C" __global__ void cell_hist_shared(
    long long n, int k, unsigned long long p0, int s0, long long st0, unsigned long long p1,
    int s1, long long st1, unsigned long long p2, int s2, long long st2, int ncells,
    unsigned long long cell_out, unsigned long long* hist) {
    extern __shared__ unsigned int sh[];
    for (int c = threadIdx.x; c < ncells; c += blockDim.x) sh[c] = 0u;
    __syncthreads();
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        long long c = cell_of(i, p0, s0, st0, p1, s1, st1, p2, s2, st2, k);
        if (cell_out) ((int*)cell_out)[i] = (int)c;
        atomicAdd(&sh[c], 1u);
    }
    __syncthreads();
    for (int c = threadIdx.x; c < ncells; c += blockDim.x)
        if (sh[c]) atomicAdd(&hist[c], (unsigned long long)sh[c]);
}

extern "C" __global__ void cell_hist_global(
    long long n, int k, unsigned long long p0, int s0, long long st0, unsigned long long p1,
    int s1, long long st1, unsigned long long p2, int s2, long long st2,
    unsigned long long cell_out, unsigned long long* hist) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long c = cell_of(i, p0, s0, st0, p1, s1, st1, p2, s2, st2, k);
    if (cell_out) ((int*)cell_out)[i] = (int)c;
    atomicAdd(&hist[c], 1ull);
}
