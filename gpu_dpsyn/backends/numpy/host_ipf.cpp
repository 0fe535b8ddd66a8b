// The Gibbs sweep's IPF steps on the host (generate/ipf.py, HostIPF), p held as
// values x contexts.  The same numbers as the NumPy steps they replace:
//  - a margin is a sum of whole numbers rint(p w 2^K) below 2^53, exact in any order, so
//    it is added straight into its cell instead of sorted by cell and reduced;
//  - a rescale multiplies each entry by its ratio once, and each context's sum over the
//    values is taken by the same pairwise tree (pairs of rows added, an odd width's last
//    row carried up as it is), then divided as NumPy divides.
// Built with -ffp-contract=off -fno-fast-math (host_kernels.py): no FMA, no reassociation.
#include <cmath>
#include <vector>

// rint (ties to even) without a library call on targets without a rounding instruction:
// for 0 <= x < 2^52, x + 2^52 lies where doubles are the integers, so the addition rounds
// x as rint does and the subtraction is exact; anything else goes to nearbyint.
static inline double rint_fast(double x) {
    const double two52 = 4503599627370496.0;
    return (x >= 0.0 && x < two52) ? (x + two52) - two52 : std::nearbyint(x);
}

// out[a, c] (values x cells, zeroed here) for values lo .. hi - 1 of p (size x U)
extern "C" void host_ipf_margin(long long lo, long long hi, long long U, const double* p,
                                const double* wg, const long long* ctx, long long cells,
                                double inv_grid, double* out) {
    for (long long a = lo; a < hi; ++a) {
        const double* row = p + a * U;
        double* o = out + a * cells;
        for (long long c = 0; c < cells; ++c) o[c] = 0.0;
        for (long long u = 0; u < U; ++u) o[ctx[u]] += rint_fast(row[u] * wg[u]);
        for (long long c = 0; c < cells; ++c) o[c] *= inv_grid;
    }
}

// p[a, u] *= ratio[a, ctx[u]], then each context's column divided by its tree sum
// (where positive), for contexts lo .. hi - 1
extern "C" void host_ipf_scale(long long lo, long long hi, long long size, long long U,
                               double* p, const double* ratio, const long long* ctx,
                               long long cells) {
    const long long B = 256;  // contexts at a time: the tree runs along rows of B
    std::vector<double> t((size_t)(size * B));
    for (long long u0 = lo; u0 < hi; u0 += B) {
        const long long nb = (hi - u0 < B) ? hi - u0 : B;
        for (long long a = 0; a < size; ++a) {
            double* row = p + a * U + u0;
            const double* r = ratio + a * cells;
            double* tr = t.data() + a * B;
            for (long long b = 0; b < nb; ++b) {
                row[b] *= r[ctx[u0 + b]];
                tr[b] = row[b];
            }
        }
        for (long long width = size; width > 1;) {
            const long long half = (width + 1) / 2;
            for (long long j = 0; j < width / 2; ++j) {
                double* o = t.data() + j * B;
                const double* x = t.data() + 2 * j * B;
                const double* y = x + B;
                for (long long b = 0; b < nb; ++b) o[b] = x[b] + y[b];
            }
            if (width % 2) {
                double* o = t.data() + (half - 1) * B;
                const double* x = t.data() + (width - 1) * B;
                for (long long b = 0; b < nb; ++b) o[b] = x[b];
            }
            width = half;
        }
        for (long long a = 0; a < size; ++a) {
            double* row = p + a * U + u0;
            for (long long b = 0; b < nb; ++b) {
                const double d = t[b];
                row[b] /= d > 0 ? d : 1.0;
            }
        }
    }
}

// host_ipf_scale for contexts lo .. hi - 1, then, while each block of contexts is still
// in cache, the next target's margin of them: whole numbers rint(p w 2^K) added into
// part (values x its cells, zeroed here), one reading of p instead of two.  The caller
// adds the blocks' parts (whole numbers: exact in any order) and scales them by 2^-K.
extern "C" void host_ipf_scale_margin(long long lo, long long hi, long long size, long long U,
                                      double* p, const double* ratio, const long long* ctx,
                                      long long cells, const double* wg,
                                      const long long* next_ctx, long long next_cells,
                                      double* part) {
    for (long long k = 0; k < size * next_cells; ++k) part[k] = 0.0;
    const long long B = 256;
    for (long long u0 = lo; u0 < hi; u0 += B) {
        const long long u1 = (hi - u0 < B) ? hi : u0 + B;
        host_ipf_scale(u0, u1, size, U, p, ratio, ctx, cells);
        for (long long a = 0; a < size; ++a) {
            const double* row = p + a * U;
            double* o = part + a * next_cells;
            for (long long u = u0; u < u1; ++u) o[next_ctx[u]] += rint_fast(row[u] * wg[u]);
        }
    }
}

// gibbs.allowed, written transposed (values x contexts, p[a * U + u]) for the fit: each
// context's values that every target allows (a target allowing none in its cell left
// out: eff), else those any allows (pos), else all, uniform over them; flag / count as
// NumPy divides.  eff, pos: the targets' (values x cells) masks end to end, target i's at
// offs[i] with cells[i] columns; ctx: (U, T).
extern "C" void host_allowed(long long U, long long size, long long T, const unsigned char* eff,
                             const unsigned char* pos, const long long* offs,
                             const long long* cells, const long long* ctx, double* p) {
    const long long B = 256;
    std::vector<unsigned char> every((size_t)(size * B)), some((size_t)(size * B));
    std::vector<long long> count((size_t)B), any((size_t)B);
    for (long long u0 = 0; u0 < U; u0 += B) {
        const long long nb = (U - u0 < B) ? U - u0 : B;
        for (long long k = 0; k < size * B; ++k) { every[k] = 1; some[k] = 0; }
        for (long long i = 0; i < T; ++i) {
            const unsigned char* e = eff + offs[i];
            const unsigned char* q = pos + offs[i];
            for (long long a = 0; a < size; ++a)
                for (long long b = 0; b < nb; ++b) {
                    const long long at = a * cells[i] + ctx[(u0 + b) * T + i];
                    every[a * B + b] &= e[at];
                    some[a * B + b] |= q[at];
                }
        }
        for (long long b = 0; b < nb; ++b) { count[b] = 0; any[b] = 0; }
        for (long long a = 0; a < size; ++a)
            for (long long b = 0; b < nb; ++b) {
                count[b] += every[a * B + b];
                any[b] += some[a * B + b];
            }
        for (long long a = 0; a < size; ++a) {
            double* row = p + a * U + u0;
            for (long long b = 0; b < nb; ++b) {
                if (count[b] > 0) row[b] = (double)every[a * B + b] / (double)count[b];
                else if (any[b] > 0) row[b] = (double)some[a * B + b] / (double)any[b];
                else row[b] = 1.0 / (double)size;
            }
        }
    }
}
