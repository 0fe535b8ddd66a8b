// The GUM record update, all gathers and scatters (see DESIGN "Parallel GUM"):
// records sorted by (cell, index) -> rem[c] pseudo-random records of each over cell are
// removed -> slot j fills under cell upper_bound(cumadd, j) by Duplicate (copy a random
// record of that cell) or Replace (write this marginal's columns).
// Counts live on the device: the number of slots is read there, never on the host.
// colptr/colsize: the columns a Duplicate copies (the marginal's component);
// allptr/allsize: every column, indexed by attribute, for Replace.
#include "common.cuh"

extern "C" __global__ void init_keys(long long n, unsigned int k0, unsigned int k1,
                                     unsigned int column, unsigned int call,
                                     unsigned long long* keys) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u32x4 w = philox4x32((unsigned int)i, column, STREAM_INIT, call, k0, k1);
    keys[i] = ((unsigned long long)w.x << 32) | (unsigned long long)i;
}

// sort keys (cell << idx_bits) | i, 32-bit when they fit (half the radix passes)
template <typename K>
__device__ __forceinline__ void cell_keys_t(long long n, const int* cell, int idx_bits, K* keys) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    keys[i] = ((K)cell[i] << idx_bits) | (K)i;
}

template <typename K>
__device__ __forceinline__ void scatter_order_t(long long n, const K* sorted, int idx_bits,
                                                long long* order) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    order[p] = (long long)(sorted[p] & (((K)1 << idx_bits) - (K)1));
}

extern "C" __global__ void cell_keys(long long n, const int* cell, int idx_bits,
                                     unsigned long long* keys) {
    cell_keys_t(n, cell, idx_bits, keys);
}
extern "C" __global__ void cell_keys32(long long n, const int* cell, int idx_bits,
                                       unsigned int* keys) {
    cell_keys_t(n, cell, idx_bits, keys);
}
extern "C" __global__ void scatter_order(long long n, const unsigned long long* sorted,
                                         int idx_bits, long long* order) {
    scatter_order_t(n, sorted, idx_bits, order);
}
extern "C" __global__ void scatter_order32(long long n, const unsigned int* sorted,
                                           int idx_bits, long long* order) {
    scatter_order_t(n, sorted, idx_bits, order);
}

// round_keys: 4 for the removal ranks (GUM_SORT), 4 for the slot pairing (GUM_PAIR),
// written by gum_prep (plan.cu)
// removed slot j: rank r of over cell c -> the record at position pi_c(r) of that cell,
// pi_c a Feistel bijection of [0, s[c]) salted by c (cpu_fallback.permute.feistel_ranks)
extern "C" __global__ void pick_removed(long long n, const long long* total_ptr,
                                        const long long* cumrem, long long ncells,
                                        const long long* rem, const long long* s,
                                        const long long* offset, const long long* order,
                                        const unsigned int* round_keys, long long* removed) {
    long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n || j >= *total_ptr) return;
    long long c = upper_bound(cumrem, ncells, j);
    long long r = j - (cumrem[c] - rem[c]);
    removed[j] = order[offset[c] + feistel_perm(r, s[c], round_keys, (unsigned int)c)];
}

extern "C" __global__ void fill_slots(
    long long n, const long long* total_ptr, const long long* cumadd, long long ncells,
    const long long* s, const long long* offset, const long long* order,
    const long long* removed, unsigned int k0, unsigned int k1, unsigned int update,
    unsigned int call, double dup_frac, const unsigned int* round_keys,
    const unsigned long long* colptr, const int* colsize, int ncols,
    const unsigned long long* allptr, const int* allsize, int k, int a0, int a1, int a2,
    long long st0, long long st1, long long st2, long long d0, long long d1, long long d2) {
    long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = *total_ptr;
    if (j >= n || j >= total) return;
    long long c = upper_bound(cumadd, ncells, j);  // the under cell of slot j
    long long dst = removed[feistel_perm(j, total, round_keys + 4, 0u)];
    u32x4 w = philox4x32((unsigned int)j, update, STREAM_GUM_SLOT, call, k0, k1);
    long long sc = s[c];
    if (sc > 0 && u01(w.y) < dup_frac) {
        long long donor = order[offset[c] + (long long)floor(u01(w.x) * (double)sc)];
        for (int a = 0; a < ncols; ++a)
            store_code(colptr[a], colsize[a], dst, load_code(colptr[a], colsize[a], donor));
    } else {
        store_code(allptr[a0], allsize[a0], dst, (unsigned int)((c / st0) % d0));
        if (k > 1) store_code(allptr[a1], allsize[a1], dst, (unsigned int)((c / st1) % d1));
        if (k > 2) store_code(allptr[a2], allsize[a2], dst, (unsigned int)((c / st2) % d2));
    }
}
