// Each context's best single move for the polish (generate/moves.py has the method and
// the NumPy body): what one record gains leaving value j (L) or entering it (A), summed
// over the targets in order, L only where the context holds value j; the first largest
// L and A; where they are one value, the better of (first, second largest A) and
// (second largest L, first).  One thread a context, every gain recomputed where it is
// needed instead of stored: the same additions in the same order as NumPy's
// (part = t_0[k_0]; part += t_1[k_1]; ...), so the same bits (no FMA contraction).
//
// tabs: the targets' gain tables end to end, target i's at offs[i], (cells, 2 size)
// each: leaving in the first size columns, entering in the rest; ctx: (U, T), each
// context's cell of each target; X: (U, size) the records of each (context, value).
#include "common.cuh"

#define NEG_INF (-(1.0 / 0.0))

__device__ __forceinline__ double move_gain(long long u, int j, int side, int size, int T,
                                            const double* tabs, const long long* offs,
                                            const long long* ctx) {
    const long long w = 2LL * size;
    const long long* k = ctx + u * T;
    double acc = tabs[offs[0] + k[0] * w + side * size + j];
    for (int i = 1; i < T; ++i) acc += tabs[offs[i] + k[i] * w + side * size + j];
    return acc;
}

__device__ __forceinline__ double leave_gain(long long u, int j, int size, int T,
                                             const double* tabs, const long long* offs,
                                             const long long* ctx, const long long* X) {
    return X[u * size + j] > 0 ? move_gain(u, j, 0, size, T, tabs, offs, ctx) : NEG_INF;
}

// the first index of the largest gain on one side, skipping index `skip` (-1: none),
// which counts as -inf there (as NumPy's second argmax over the row with it masked)
__device__ __forceinline__ int first_max(long long u, int side, int skip, int size, int T,
                                         const double* tabs, const long long* offs,
                                         const long long* ctx, const long long* X) {
    double best = 0.0;
    int at = 0;
    for (int j = 0; j < size; ++j) {
        const double x = j == skip ? NEG_INF
                       : side ? move_gain(u, j, 1, size, T, tabs, offs, ctx)
                              : leave_gain(u, j, size, T, tabs, offs, ctx, X);
        if (j == 0 || x > best) { best = x; at = j; }
    }
    return at;
}

extern "C" __global__ void best_moves(long long lo, long long hi, int size, int T,
                                      const double* tabs, const long long* offs,
                                      const long long* ctx, const long long* X,
                                      long long* out_u, long long* out_v, double* out_gain) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long u = lo + (long long)blockIdx.x * blockDim.x + threadIdx.x; u < hi;
         u += stride) {
        int a = first_max(u, 0, -1, size, T, tabs, offs, ctx, X);
        int b = first_max(u, 1, -1, size, T, tabs, offs, ctx, X);
        if (a == b) {  // one value: the better of the two second choices
            const int a2 = first_max(u, 0, a, size, T, tabs, offs, ctx, X);
            const int b2 = first_max(u, 1, b, size, T, tabs, offs, ctx, X);
            const double keep_u = leave_gain(u, a, size, T, tabs, offs, ctx, X) +
                                  move_gain(u, b2, 1, size, T, tabs, offs, ctx);
            const double keep_v = leave_gain(u, a2, size, T, tabs, offs, ctx, X) +
                                  move_gain(u, b, 1, size, T, tabs, offs, ctx);
            if (keep_v > keep_u) a = a2;
            else b = b2;
        }
        out_u[u] = a;
        out_v[u] = b;
        out_gain[u] = leave_gain(u, a, size, T, tabs, offs, ctx, X) +
                      move_gain(u, b, 1, size, T, tabs, offs, ctx);
    }
}
