// One pass of the polish's moves in a few launches (generate/polish.py has the method and
// the array code, one_pass_masked; backends/cuda/passes.py drives these).  The targets'
// cells lie end to end in one array, target i's (values x cells_i) from start[i]; the
// passes' blocks are the targets' leavers and enterers in turn (block b: target b / 2,
// leaving where b is even), as polish.target_blocks lists them.  Every number is the
// array code's: the same operations in the same order (no FMA contraction), and the
// counts are whole, so their sums are exact in any order, atomics included.
#include "common.cuh"

__device__ __forceinline__ double clip1(double x) {  // np.clip(x, -1, 1)
    x = x < -1.0 ? -1.0 : x;
    return x > 1.0 ? 1.0 : x;
}

// g = t - s, and moves.gain_tables laid end to end (target i's (cells_i, 2 size) table
// from 2 start[i]): clip(-2g - 1, -1, 1) leaving, clip(2g - 1, -1, 1) entering
extern "C" __global__ void pass_tables(long long n, int T, int size, const long long* start,
                                       const long long* cells, const double* t,
                                       const double* s, double* g, double* tabs) {
    GRID_STRIDE(e, n) {
        const int i = (int)upper_bound(start, T, e) - 1;  // the target holding element e
        const long long local = e - start[i], j = local / cells[i], k = local % cells[i];
        const double gv = t[e] - s[e];
        g[e] = gv;
        double* row = tabs + 2 * start[i] + k * 2 * size;
        row[j] = clip1(-2.0 * gv - 1.0);
        row[size + j] = clip1(2.0 * gv - 1.0);
    }
}

// each context's block size (polish.block_sizes, 0 without a gaining move): as many
// records as every target gains on, one at least, no more than the context has of u
extern "C" __global__ void pass_sizes(long long m, int T, int size, const long long* start,
                                      const long long* cells, const double* g,
                                      const long long* ctx, const long long* X,
                                      const long long* u, const long long* v,
                                      const double* gain, double tolerance, long long* q) {
    GRID_STRIDE(p, m) {
        double room = 0.0;
        for (int i = 0; i < T; ++i) {
            const long long c = ctx[p * T + i];
            const double leave = -g[start[i] + u[p] * cells[i] + c];
            const double enter = g[start[i] + v[p] * cells[i] + c];
            room = i == 0 ? leave : (leave < room ? leave : room);  // np.minimum
            room = enter < room ? enter : room;
        }
        double b = floor(room);
        b = b < 1.0 ? 1.0 : b;
        const double have = (double)X[p * size + u[p]];
        b = have < b ? have : b;
        q[p] = gain[p] > tolerance ? (long long)b : 0;
    }
}

// sort keys of blocks b0 .. b0 + k - 1, each proposal in priority order (by_priority):
// its block's offset in the chunk plus its flat cell (w cells_i + its context's cell,
// w = u leaving, v entering), so a stable sort orders them by block, cell, priority
template <typename K>
__device__ __forceinline__ void keys_of(long long n, long long m, int b0, int T,
                                        const long long* cells, const long long* boff,
                                        const long long* by_priority, const long long* ctx,
                                        const long long* u, const long long* v, K* key) {
    GRID_STRIDE(e, n) {
        const int b = b0 + (int)(e / m), i = b / 2;
        const long long p = by_priority[e % m];
        const long long w = (b % 2 == 0) ? u[p] : v[p];
        key[e] = (K)(boff[b - b0] + w * cells[i] + ctx[p * T + i]);
    }
}

// wide: 64-bit keys (else 32), as the chunk's cells need
extern "C" __global__ void pass_keys(long long n, long long m, int b0, int T,
                                     const long long* cells, const long long* boff,
                                     const long long* by_priority, const long long* ctx,
                                     const long long* u, const long long* v, int wide,
                                     void* key) {
    if (wide) keys_of(n, m, b0, T, cells, boff, by_priority, ctx, u, v, (long long*)key);
    else keys_of(n, m, b0, T, cells, boff, by_priority, ctx, u, v, (unsigned int*)key);
}

// the sorted keys and block sizes (the running sum of the sizes is taken next)
template <typename K>
__device__ __forceinline__ void sorted_of(long long n, long long m, const K* key,
                                          const long long* order, const long long* by_priority,
                                          const long long* q, K* cs, double* qq) {
    GRID_STRIDE(i, n) {
        const long long e = order[i];
        cs[i] = key[e];
        qq[i] = (double)q[by_priority[e % m]];
    }
}

extern "C" __global__ void pass_sorted(long long n, long long m, int wide, const void* key,
                                       const long long* order, const long long* by_priority,
                                       const long long* q, void* cs, double* qq) {
    if (wide) sorted_of(n, m, (const long long*)key, order, by_priority, q, (long long*)cs, qq);
    else sorted_of(n, m, (const unsigned int*)key, order, by_priority, q, (unsigned int*)cs,
                   qq);
}

// polish.all_block_gains after its sort: what each block of q records gains in its cell
// after the records ranked before it there, into res[b m + proposal]
template <typename K>
__device__ __forceinline__ void gains_of(long long n, long long m, int b0, const K* cs,
                                         const double* qq, const double* csum,
                                         const long long* order, const long long* by_priority,
                                         const long long* start, const long long* boff,
                                         const double* g, double* res) {
    GRID_STRIDE(i, n) {
        const K c = cs[i];
        long long lo = 0, hi = i;  // the first of this cell's run (searchsorted, left)
        while (lo < hi) {
            const long long mid = lo + (hi - lo) / 2;
            if (cs[mid] < c) lo = mid + 1;
            else hi = mid;
        }
        const double before = (csum[i] - qq[i]) - (csum[lo] - qq[lo]);
        const long long e = order[i];
        const int b = b0 + (int)(e / m);
        const bool leaving = b % 2 == 0;
        const double gv = g[start[b / 2] + ((long long)c - boff[b - b0])];
        const double x = gv + (leaving ? before : -before);
        const double y = x + (leaving ? qq[i] : -qq[i]);
        res[(long long)b * m + by_priority[e % m]] = fabs(x) - fabs(y);
    }
}

extern "C" __global__ void pass_gains(long long n, long long m, int b0, int wide,
                                      const void* cs, const double* qq, const double* csum,
                                      const long long* order, const long long* by_priority,
                                      const long long* start, const long long* boff,
                                      const double* g, double* res) {
    if (wide) gains_of(n, m, b0, (const long long*)cs, qq, csum, order, by_priority, start,
                       boff, g, res);
    else gains_of(n, m, b0, (const unsigned int*)cs, qq, csum, order, by_priority, start, boff,
                  g, res);
}

__device__ __forceinline__ void add_double(double* p, double v) {
    atomicAdd(p, v);  // whole counts: exact in any order
}

// accept the proposals whose blocks gain over the targets (summed in block order, from
// 0, as the array code's total), move their records in X and in the targets' counts s,
// and leave each context's accepted gain (0 where none) for the pass's one read
extern "C" __global__ void pass_accept(long long m, int T, int size, const long long* start,
                                       const long long* cells, const long long* ctx,
                                       const long long* u, const long long* v,
                                       const double* gain, const long long* q,
                                       const double* res, double tolerance, long long* X,
                                       double* s, double* gained) {
    GRID_STRIDE(p, m) {
        double total = 0.0;
        for (int b = 0; b < 2 * T; ++b) total += res[(long long)b * m + p];
        const bool ok = gain[p] > tolerance && total > tolerance;
        const long long k = ok ? q[p] : 0;
        gained[p] = ok ? total : 0.0;
        if (k == 0) continue;
        X[p * size + u[p]] -= k;
        X[p * size + v[p]] += k;
        for (int i = 0; i < T; ++i) {
            const long long c = ctx[p * T + i];
            add_double(&s[start[i] + v[p] * cells[i] + c], (double)k);
            add_double(&s[start[i] + u[p] * cells[i] + c], -(double)k);
        }
    }
}
