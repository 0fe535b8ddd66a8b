// The Gibbs sweep's IPF passes in three launches a target (generate/gibbs.py,
// fit_conditional, has the method and the array code; backends/cuda/passes.py drives
// these).  p is U x size (each context's conditional, a row), ctx U x T (each context's
// cell of each target), each target's table values x cells.  The margins' terms and the
// gaps are on an exact grid (ipf.on_grid: rint(x 2^K) / 2^K), so the atomics and the
// warps' sums add them exactly in any order; every other number is the array code's,
// operation for operation (no FMA contraction), so both backends fit the same p to the
// bit.
#include "common.cuh"

// E += on_grid(p w, n) summed by the contexts' cells of target i (E: values x cells, 0
// before: ipf_ratio leaves it so)
extern "C" __global__ void ipf_margin(long long U, int size, const double* p, const double* w,
                                      double scale, const long long* ctx, int T, int i,
                                      long long cells, double* E) {
    GRID_STRIDE(e, U * size) {
        const long long u = e / size;
        const int a = (int)(e % size);
        const double x = rint(p[e] * w[u] * scale) / scale;
        if (x != 0.0) atomicAdd(&E[a * cells + ctx[u * T + i]], x);
    }
}

// the ratio t / E where both are positive (else 1), the gap |E - t| on its grid added to
// gap[0] (a sum for each thread, then for each warp: one atomic a warp, not a cell), and
// E set back to 0 for the next margin
extern "C" __global__ void ipf_ratio(long long n, double* E, const double* t, double scale,
                                     double* ratio, double* gap) {
    double part = 0.0;
    GRID_STRIDE(e, n) {
        const double m = E[e], target = t[e];
        part += rint(fabs(m - target) * scale) / scale;
        ratio[e] = (m > 0.0 && target > 0.0) ? target / m : 1.0;
        E[e] = 0.0;
    }
    if (blockDim.x % 32 == 0) {  // whole warps (the CPU emulation runs blocks of one)
        for (int o = 16; o > 0; o >>= 1) part += __shfl_xor_sync(0xFFFFFFFFu, part, o);
        if (threadIdx.x % 32 != 0) return;
    }
    if (part != 0.0) atomicAdd(gap, part);
}

// p's row u times its cell's ratios, then divided by its sum (rows_normalised: a
// pairwise tree over the values, an odd width's last carried up as x + 0 = x, here
// folded from a stack of power-of-two blocks: the same additions)
extern "C" __global__ void ipf_scale(long long U, int size, double* p, const double* ratio,
                                     const long long* ctx, int T, int i, long long cells) {
    GRID_STRIDE(u, U) {
        double* row = p + u * size;
        const long long c = ctx[u * T + i];
        double part[64];
        int level[64], top = 0;
        for (int a = 0; a < size; ++a) {
            const double x = row[a] * ratio[a * cells + c];
            row[a] = x;
            double s = x;
            int l = 0;
            while (top > 0 && level[top - 1] == l) {  // two blocks of 2^l: one of 2^(l+1)
                s = part[--top] + s;
                ++l;
            }
            part[top] = s;
            level[top++] = l;
        }
        double total = top ? part[--top] : 0.0;
        while (top > 0) total = part[--top] + total;
        const double d = total > 0.0 ? total : 1.0;
        for (int a = 0; a < size; ++a) row[a] = row[a] / d;
    }
}

// the pass's worst target TVD, max over i of 0.5 gap[i] / total[i], into out[0]; the
// gaps set back to 0 for the next pass
extern "C" __global__ void ipf_worst(int T, double* gap, const double* total, double* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    double worst = 0.0;
    for (int i = 0; i < T; ++i) {
        const double x = 0.5 * gap[i] / total[i];
        worst = (i == 0 || x > worst || x != x) ? x : worst;  // NumPy's max: NaN stays
        gap[i] = 0.0;
    }
    out[0] = worst;
}
