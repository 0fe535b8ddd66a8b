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

// sort keys (cell << idx_bits) | i where they fit 32 bits; the sorted keys are the
// (cell, index) order itself, read through order_at (past 32 bits the order is a stable
// argsort of the cell codes, read as 64-bit "keys" with idx_bits 63: updates.cell_order)
extern "C" __global__ void cell_keys32(long long n, const int* cell, int idx_bits,
                                       unsigned int* keys) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    keys[i] = ((unsigned int)cell[i] << idx_bits) | (unsigned int)i;
}

// the record at position p of the (cell, index) order: the index bits of the sorted key
template <typename K>
__device__ __forceinline__ long long order_at(const K* sorted, long long p, int idx_bits) {
    return (long long)(sorted[p] & (((K)1 << idx_bits) - (K)1));
}

// Feistel round keys of this update, as backends.numpy.permute.round_keys
__device__ __forceinline__ void round_keys(unsigned int* rk, unsigned int stream,
                                           unsigned int update, unsigned int call,
                                           unsigned int k0, unsigned int k1) {
    for (unsigned int r = 0; r < 4; ++r) rk[r] = philox4x32(r, update, stream, call, k0, k1).x;
}

// removed slot j: rank r of over cell c -> the record at position pi_c(r) of that cell,
// pi_c a Feistel bijection of [0, s[c]) salted by c (backends.numpy.permute.feistel_ranks)
template <typename K>
__device__ __forceinline__ void pick_removed_t(
    long long n, const long long* total_ptr, const long long* cumrem, long long ncells,
    const long long* rem, const long long* s, const long long* offset, const K* sorted,
    int idx_bits, unsigned int k0, unsigned int k1, unsigned int update, unsigned int call,
    long long* removed) {
    long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n || j >= *total_ptr) return;
    long long c = upper_bound(cumrem, ncells, j);
    long long r = j - (cumrem[c] - rem[c]);
    unsigned int rk[4];
    round_keys(rk, STREAM_GUM_SORT, update, call, k0, k1);
    removed[j] = order_at(sorted, offset[c] + feistel_perm(r, s[c], rk, (unsigned int)c),
                          idx_bits);
}

// slot j of under cell c: its donor (a random record of c, copied by a Duplicate), or
// -1 for a Replace (which writes c's values)
template <typename K>
__device__ __forceinline__ long long slot_donor(
    long long j, long long c, const long long* s, const long long* offset, const K* sorted,
    int idx_bits, unsigned int k0, unsigned int k1, unsigned int update, unsigned int call,
    double dup_frac) {
    u32x4 w = philox4x32((unsigned int)j, update, STREAM_GUM_SLOT, call, k0, k1);
    long long sc = s[c];
    if (sc > 0 && u01(w.y) < dup_frac)
        return order_at(sorted, offset[c] + (long long)floor(u01(w.x) * (double)sc), idx_bits);
    return -1;
}

// the record dst (removed, in cell order: a Replace keeps agreeing columns) takes the
// donor's columns, or cell c's values
__device__ __forceinline__ void fill_record(
    long long dst, long long donor, long long c, const unsigned long long* colptr,
    const int* colsize, int ncols, const unsigned long long* allptr, const int* allsize, int k,
    int a0, int a1, int a2, long long st0, long long st1, long long st2, long long d0,
    long long d1, long long d2) {
    if (donor >= 0) {
        for (int a = 0; a < ncols; ++a)
            store_code(colptr[a], colsize[a], dst, load_code(colptr[a], colsize[a], donor));
    } else {
        store_code(allptr[a0], allsize[a0], dst, (unsigned int)((c / st0) % d0));
        if (k > 1) store_code(allptr[a1], allsize[a1], dst, (unsigned int)((c / st1) % d1));
        if (k > 2) store_code(allptr[a2], allsize[a2], dst, (unsigned int)((c / st2) % d2));
    }
}

// slot j fills under cell c = upper_bound(cumadd, j)
template <typename K>
__device__ __forceinline__ void fill_slots_t(
    long long n, const long long* total_ptr, const long long* cumadd, long long ncells,
    const long long* s, const long long* offset, const K* sorted, int idx_bits,
    const long long* removed, unsigned int k0, unsigned int k1, unsigned int update,
    unsigned int call, double dup_frac, const unsigned long long* colptr, const int* colsize,
    int ncols, const unsigned long long* allptr, const int* allsize, int k, int a0, int a1,
    int a2, long long st0, long long st1, long long st2, long long d0, long long d1,
    long long d2) {
    long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = *total_ptr;
    if (j >= n || j >= total) return;
    long long c = upper_bound(cumadd, ncells, j);
    fill_record(removed[j], slot_donor(j, c, s, offset, sorted, idx_bits, k0, k1, update, call,
                                       dup_frac),
                c, colptr, colsize, ncols, allptr, allsize, k, a0, a1, a2, st0, st1, st2, d0,
                d1, d2);
}

#define PICK_ARGS long long n, const long long* total_ptr, const long long* cumrem, \
    long long ncells, const long long* rem, const long long* s, const long long* offset
#define PICK_TAIL int idx_bits, unsigned int k0, unsigned int k1, unsigned int update, \
    unsigned int call, long long* removed
extern "C" __global__ void pick_removed(PICK_ARGS, const unsigned long long* sorted, PICK_TAIL) {
    pick_removed_t(n, total_ptr, cumrem, ncells, rem, s, offset, sorted, idx_bits, k0, k1,
                   update, call, removed);
}
extern "C" __global__ void pick_removed32(PICK_ARGS, const unsigned int* sorted, PICK_TAIL) {
    pick_removed_t(n, total_ptr, cumrem, ncells, rem, s, offset, sorted, idx_bits, k0, k1,
                   update, call, removed);
}

#define FILL_ARGS long long n, const long long* total_ptr, const long long* cumadd, \
    long long ncells, const long long* s, const long long* offset
#define FILL_TAIL int idx_bits, const long long* removed, unsigned int k0, unsigned int k1, \
    unsigned int update, unsigned int call, double dup_frac, \
    const unsigned long long* colptr, const int* colsize, int ncols, \
    const unsigned long long* allptr, const int* allsize, int k, int a0, int a1, int a2, \
    long long st0, long long st1, long long st2, long long d0, long long d1, long long d2
#define FILL_PASS n, total_ptr, cumadd, ncells, s, offset, sorted, idx_bits, removed, k0, k1, \
    update, call, dup_frac, colptr, colsize, ncols, allptr, allsize, k, a0, a1, a2, st0, st1, \
    st2, d0, d1, d2
extern "C" __global__ void fill_slots(FILL_ARGS, const unsigned long long* sorted, FILL_TAIL) {
    fill_slots_t(FILL_PASS);
}
extern "C" __global__ void fill_slots32(FILL_ARGS, const unsigned int* sorted, FILL_TAIL) {
    fill_slots_t(FILL_PASS);
}
