// The polish's best move of each context on the host (generate/moves.py has the rule;
// backends/cuda/moves.cu is the device's body).  A GPU thread recomputes each value's
// gain where it needs it and stores nothing; here a context's gains are summed a whole
// table row at a time (each target's 2 size entries, contiguous, vectorised: this unit
// is built with host_build.NATIVE, or PLAIN) into a buffer, then chosen from it.  Every
// gain is the same additions in the same order (t_0[k_0] + t_1[k_1] + ...), so the same
// bits; and the same choices: the first largest leaving gain among the values the
// context holds and the first largest entering gain, and where they are one value the
// better of (first, second largest entering) and (second largest leaving, first).
#include <cstddef>
#include <limits>
#include <vector>

// the first index of the largest of x[0 .. size - 1], index `skip` counted as -inf
static inline int first_max(const double* x, int size, int skip) {
    const double ninf = -std::numeric_limits<double>::infinity();
    double best = 0.0;
    int at = 0;
    for (int j = 0; j < size; ++j) {
        const double y = j == skip ? ninf : x[j];
        if (j == 0 || y > best) { best = y; at = j; }
    }
    return at;
}

// contexts lo .. hi - 1; tabs: the targets' gain tables end to end, target i's at
// offs[i] with cells[i] rows of 2 size (leaving, then entering); ctx: (U, T); X: (U,
// size).  Returns -1 (nothing computed) when a context's cell falls outside its
// target's table: checked here, where the rows are read anyway.
extern "C" int host_best_moves(long long lo, long long hi, int size, int T,
                               const double* tabs, const long long* offs,
                               const long long* cells, const long long* ctx,
                               const long long* X, long long* u, long long* v, double* gain) {
    for (long long k = lo; k < hi; ++k)
        for (int i = 0; i < T; ++i)
            if (ctx[k * T + i] < 0 || ctx[k * T + i] >= cells[i]) return -1;
    if (T < 1 || size < 1) return -1;
    const double ninf = -std::numeric_limits<double>::infinity();
    const long long w = 2LL * size;
    std::vector<double> acc((std::size_t)w), leave((std::size_t)size);
    double* sum = acc.data();
    double* L = leave.data();
    const double* A = sum + size;
    for (long long k = lo; k < hi; ++k) {
        const long long* c = ctx + k * T;
        const double* row = tabs + offs[0] + c[0] * w;
        for (long long j = 0; j < w; ++j) sum[j] = row[j];
        for (int i = 1; i < T; ++i) {
            row = tabs + offs[i] + c[i] * w;
            for (long long j = 0; j < w; ++j) sum[j] += row[j];
        }
        const long long* x = X + k * size;
        for (int j = 0; j < size; ++j) L[j] = x[j] > 0 ? sum[j] : ninf;
        int a = first_max(L, size, -1), b = first_max(A, size, -1);
        if (a == b) {  // one value: the better of the two second choices
            const int a2 = first_max(L, size, a), b2 = first_max(A, size, b);
            if (L[a2] + A[b] > L[a] + A[b2]) a = a2;
            else b = b2;
        }
        u[k] = a;
        v[k] = b;
        gain[k] = L[a] + A[b];
    }
    return 0;
}
