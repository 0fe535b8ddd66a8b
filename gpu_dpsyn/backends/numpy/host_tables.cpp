// The polish's table sums on the host (generate/polish.py), as loops that add straight
// into their cells.  The same numbers as the NumPy bodies they replace, which sort by
// cell first: every sum here is of whole counts (below 2^53), exact in any order.
#include <cmath>
#include <vector>

// out[c, j] (n_cells x size, zeroed here) = the sum of values[u, j] over the rows u
// with cells[u] = c (ipf.cell_sums: whole counts or values on a grid)
extern "C" void host_cell_sums(long long U, long long size, const double* values,
                               const long long* cells, long long n_cells, double* out) {
    for (long long k = 0; k < n_cells * size; ++k) out[k] = 0.0;
    for (long long u = 0; u < U; ++u) {
        double* o = out + cells[u] * size;
        const double* v = values + u * size;
        for (long long j = 0; j < size; ++j) o[j] += v[j];
    }
}

// polish.all_block_gains for one block: the proposals taken in priority order
// (by_priority[r]: the proposal ranked r), each gaining |x| - |x + sign q| with
// x = g[cell] + sign * (the records of its cell's proposals ranked before it), each
// proposal's cell w[j] cells + ci[j] (polish.target_blocks' cells, not stored: w the
// value it leaves or enters, ci its context's cell of the target)
extern "C" void host_move_gains(long long m, const long long* by_priority, const long long* w,
                                const long long* ci, long long cells, const long long* q,
                                const double* g, double sign, long long n_g, double* out) {
    std::vector<double> before((size_t)n_g, 0.0);
    for (long long r = 0; r < m; ++r) {
        const long long j = by_priority[r], c = w[j] * cells + ci[j];
        const double qq = (double)q[j], x = g[c] + sign * before[c];
        before[c] += qq;
        const double y = x + sign * qq;
        out[j] = std::fabs(x) - std::fabs(y);
    }
}

// polish.block_sizes from each proposal's values and cells: as many records as every
// target gains on (-g leaving (u, its cell), g entering (v, its cell), the targets in
// order), one at least, and no more than its context (row) has of value u
extern "C" void host_block_sizes(long long m, int T, const long long* row, const long long* u,
                                 const long long* v, const long long* X, long long size,
                                 const unsigned long long* ctx, const unsigned long long* g,
                                 const long long* cells, long long* q) {
    for (long long j = 0; j < m; ++j) {
        double room = 0.0;
        for (int i = 0; i < T; ++i) {
            const long long c = ((const long long*)ctx[i])[j];
            const double* gi = (const double*)g[i];
            const double leave = -gi[u[j] * cells[i] + c], enter = gi[v[j] * cells[i] + c];
            room = i == 0 ? leave : (leave < room ? leave : room);  // np.minimum
            room = enter < room ? enter : room;
        }
        double b = std::floor(room);
        b = b < 1.0 ? 1.0 : b;
        const double have = (double)X[row[j] * size + u[j]];
        q[j] = (long long)(have < b ? have : b);
    }
}

// GUM's removal rate (backends/arrays.removal_rate): bisection on [0, 1] for the smallest
// beta with sum(rint(min(over, beta s))) >= total, in `steps` halvings.  The sums are of
// whole numbers below 2^53: exact in any order (four running sums here), so the same beta
// as NumPy's.  Only the cells with over > 0 add anything (min(0, beta s) is 0): they are
// gathered once, not read at every step.
extern "C" double host_removal_rate(long long n, const double* over, const double* s,
                                    double total, int steps) {
    std::vector<double> o, w;
    for (long long i = 0; i < n; ++i)
        if (over[i] > 0.0) { o.push_back(over[i]); w.push_back(s[i]); }
    const long long m = (long long)o.size();
    const double two52 = 4503599627370496.0;
    double lo = 0.0, hi = 1.0;
    for (int k = 0; k < steps; ++k) {
        const double mid = (lo + hi) * 0.5;
        double sum[4] = {0.0, 0.0, 0.0, 0.0};
        for (long long i = 0; i < m; ++i) {
            const double b = mid * w[i], x = o[i] < b ? o[i] : b;
            // rint as x + 2^52 - 2^52 where that is exact (0 <= x < 2^52), else nearbyint
            sum[i & 3] += (x >= 0.0 && x < two52) ? (x + two52) - two52 : std::nearbyint(x);
        }
        if ((sum[0] + sum[1]) + (sum[2] + sum[3]) >= total) hi = mid;
        else lo = mid;
    }
    return hi;
}
