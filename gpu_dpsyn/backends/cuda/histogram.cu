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

// Many marginals' histograms in one launch, laid end to end in hist (a GUM iteration's
// errors, a measurement's marginals): marginal m has k[m] columns attr[3m..], strides
// stride[3m..] and starts at off[m].  The marginals come in groups of consecutive ones,
// group g = [first[g], first[g + 1]); shared[g] > 0: the group's cells (that many, from
// off[first[g]]) are counted in shared memory, else (one large marginal) with global
// atomics.  gridDim.x = ngroups x the blocks of a group; each group reads every record.
extern "C" __global__ void multi_hist(
    long long n, const unsigned long long* colptr, const int* colsize, const long long* k,
    const long long* attr, const long long* stride, const long long* off,
    const long long* first, const long long* shared, int ngroups, unsigned long long* hist) {
    extern __shared__ unsigned int sh[];
    unsigned int per = gridDim.x / ngroups;  // blocks per group
    int g = blockIdx.x / per;
    long long m0 = first[g], m1 = first[g + 1], base = off[m0], cells = shared[g];
    for (long long c = threadIdx.x; c < cells; c += blockDim.x) sh[c] = 0u;
    __syncthreads();
    long long step = (long long)per * blockDim.x;
    for (long long i = (long long)(blockIdx.x % per) * blockDim.x + threadIdx.x; i < n;
         i += step) {
        for (long long m = m0; m < m1; ++m) {
            long long c = 0;
            for (int j = 0; j < k[m]; ++j) {
                long long a = attr[3 * m + j];
                c += (long long)load_code(colptr[a], colsize[a], i) * stride[3 * m + j];
            }
            if (cells > 0) atomicAdd(&sh[off[m] - base + c], 1u);
            else atomicAdd(&hist[off[m] + c], 1ull);
        }
    }
    __syncthreads();
    for (long long c = threadIdx.x; c < cells; c += blockDim.x)
        if (sh[c]) atomicAdd(&hist[base + c], (unsigned long long)sh[c]);
}
