// The cell-level GUM plan in one launch of one block (gpu_dpsyn.gum.plan_update, the same
// float64 arithmetic step for step): on the GPU the NumPy-style version costs ~400 small
// launches an update (48 bisection steps, two apportionments), which is all overhead.
// The same launch leaves the prefix sums the record pass needs (gum_prep alone computes
// them for add/rem that came from elsewhere).
// Sums of integer-valued doubles are exact in any order (< 2^53), so a block reduction
// gives NumPy's sum bit for bit.  blockDim: a multiple of 32, at most 1024 (the CPU
// emulation in tests/cuda_emu runs 64 real threads).
#include "common.cuh"

#define PLAN_MAX_WARPS 32
#define BISECT_STEPS 48
#define SECTIONS 8  // bisection 3 steps at a time: 7 points per barrier round
#define FULL_MASK 0xFFFFFFFFu

__device__ __forceinline__ long long warp_sum(long long v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// every thread gets the block's sum (red: PLAN_MAX_WARPS scratch)
__device__ long long block_sum(long long v, long long* red) {
    unsigned int t = threadIdx.x, nw = blockDim.x >> 5;
    v = warp_sum(v);
    if ((t & 31) == 0) red[t >> 5] = v;
    __syncthreads();
    long long r = 0;
    for (unsigned int w = 0; w < nw; ++w) r += red[w];
    __syncthreads();
    return r;
}

// exclusive prefix sum over the threads of the block: a scan in each warp, then the
// totals of the warps before
__device__ long long block_exclusive_scan(long long v, long long* red) {
    unsigned int t = threadIdx.x, lane = t & 31, w = t >> 5;
    long long x = v;
    for (int d = 1; d < 32; d <<= 1) {
        long long y = __shfl_up_sync(FULL_MASK, x, d);
        if (lane >= (unsigned int)d) x += y;
    }
    if (lane == 31) red[w] = x;
    __syncthreads();
    long long base = 0;
    for (unsigned int i = 0; i < w; ++i) base += red[i];
    __syncthreads();
    return base + x - v;
}

__device__ __forceinline__ unsigned long long dbits(double x) {
    union { double d; unsigned long long u; } c;
    c.d = x;
    return c.u;
}

// out[i] = floor(v[i] * total / sum(v)) + 1 for the `short` largest fractional parts
// (ties to the lower index): gum.apportion, largest remainder.  v integer-valued >= 0.
__device__ void apportion(long long n, const double* v, long long total, double* frac,
                          long long* out, long long* red, unsigned int* bins,
                          long long* shared_k) {
    unsigned int t = threadIdx.x, nt = blockDim.x;
    long long part = 0;
    for (long long i = t; i < n; i += nt) part += (long long)v[i];
    long long S = block_sum(part, red);
    double ratio = S > 0 ? (double)total / (double)S : 0.0;
    part = 0;
    for (long long i = t; i < n; i += nt) {
        double q = v[i] * ratio, b = floor(q);
        frac[i] = q - b;  // exact, and >= +0
        out[i] = (long long)b;
        part += (long long)b;
    }
    long long k = total - block_sum(part, red);
    if (k <= 0) return;  // the same for every thread
    if (k >= n) {  // NumPy's rank < short: all of them
        for (long long i = t; i < n; i += nt) out[i] += 1;
        __syncthreads();
        return;
    }
    // radix select, 8 bits at a time from the top: T = the k-th largest fraction
    // (non-negative doubles order like their bit patterns)
    unsigned long long prefix = 0;
    for (int shift = 56; shift >= 0; shift -= 8) {
        unsigned long long hi = shift == 56 ? 0ull : (~0ull << (shift + 8));
        for (unsigned int b = t; b < 256; b += nt) bins[b] = 0u;
        __syncthreads();
        for (long long i = t; i < n; i += nt) {
            unsigned long long key = dbits(frac[i]);
            if ((key & hi) == prefix) atomicAdd(&bins[(key >> shift) & 255ull], 1u);
        }
        __syncthreads();
        // 16 chunks of 16 digits, high digits first: sums in parallel, walk in serial
        for (unsigned int c = t; c < 16; c += nt) {
            unsigned int sum = 0;
            for (int d = 0; d < 16; ++d) sum += bins[255 - 16 * c - d];
            bins[256 + c] = sum;
        }
        __syncthreads();
        if (t == 0) {
            long long kk = k;
            unsigned int c = 0;
            while (c < 15 && (long long)bins[256 + c] < kk) kk -= bins[256 + c++];
            unsigned int d = 255 - 16 * c;
            while ((long long)bins[d] < kk) kk -= bins[d--];
            shared_k[0] = kk;
            shared_k[1] = (long long)d;
        }
        __syncthreads();
        k = shared_k[0];
        prefix |= (unsigned long long)shared_k[1] << shift;
        __syncthreads();
    }
    // every fraction above T gets one more; of those equal to T, the k lowest indices
    long long chunk = (n + nt - 1) / nt, lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
    long long ties = 0;
    for (long long i = lo; i < hi; ++i) ties += dbits(frac[i]) == prefix;
    long long before = block_exclusive_scan(ties, red);
    for (long long i = lo; i < hi; ++i) {
        unsigned long long key = dbits(frac[i]);
        if (key > prefix) out[i] += 1;
        else if (key == prefix) out[i] += before++ < k;
    }
    __syncthreads();
}

// chunked prefix sum of x into out, inclusive or exclusive (block-cooperative; each
// thread owns one contiguous chunk, and the closing barrier publishes it to all)
__device__ void block_cumsum(long long n, const long long* x, long long* out, bool exclusive,
                             long long* red) {
    unsigned int t = threadIdx.x, nt = blockDim.x;
    long long chunk = (n + nt - 1) / nt, lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
    long long part = 0;
    for (long long i = lo; i < hi; ++i) part += x[i];
    long long run = block_exclusive_scan(part, red);
    for (long long i = lo; i < hi; ++i) {
        long long before = run;
        run += x[i];
        out[i] = exclusive ? before : run;
    }
    __syncthreads();
}

// what the record pass needs: offset = cumsum(s) - s, cumadd, cumrem
__device__ void plan_scans(long long n, const long long* s, const long long* add,
                           const long long* rem, long long* offset, long long* cumadd,
                           long long* cumrem, long long* red) {
    block_cumsum(n, s, offset, true, red);
    block_cumsum(n, add, cumadd, false, red);
    block_cumsum(n, rem, cumrem, false, red);
}

extern "C" __global__ void plan_update(long long n, const long long* s, const double* t,
                                       double alpha, double* over, double* work,
                                       long long* add, long long* rem, double* beta,
                                       long long* offset, long long* cumadd,
                                       long long* cumrem) {
    __shared__ long long red[PLAN_MAX_WARPS];
    __shared__ unsigned int bins[256 + 16];
    __shared__ long long shared_k[2];
    unsigned int tid = threadIdx.x, nt = blockDim.x;
    long long sum_add = 0, sum_over = 0;
    for (long long i = tid; i < n; i += nt) {
        double si = (double)s[i], ti = t[i], gap = ti - si;
        double a = gap > 0 ? rint(si > 0 ? fmin(gap, alpha * si) : fmin(ti, alpha * ti)) : 0.0;
        double o = gap < 0 ? -gap : 0.0;
        work[i] = a;
        over[i] = o;
        sum_add += (long long)a;
        sum_over += (long long)rint(o);
    }
    long long A = block_sum(sum_add, red), O = block_sum(sum_over, red);
    long long total = A < O ? A : O;
    // add: apportioned in place of the raw amounts (frac goes to `rem` as scratch)
    apportion(n, work, total, (double*)rem, add, red, bins, shared_k);
    // beta: bisection for the smallest removal rate that frees `total` records.  The
    // predicate is monotone in mid and every point is a dyadic k / 2^48 (exact), so
    // testing the 7 inner points of the interval and keeping the eighth where it first
    // holds is 3 steps of NumPy's bisection, with a third of the barriers.
    __shared__ long long red7[SECTIONS - 1][PLAN_MAX_WARPS];
    unsigned int nw = nt >> 5;
    double lo = 0.0, hi = 1.0;
    for (int pass = 0; pass < BISECT_STEPS / 3; ++pass) {
        double step = (hi - lo) * (1.0 / SECTIONS);
        long long part[SECTIONS - 1];
        for (int j = 0; j < SECTIONS - 1; ++j) part[j] = 0;
        for (long long i = tid; i < n; i += nt) {
            double si = (double)s[i], oi = over[i];
            for (int j = 0; j < SECTIONS - 1; ++j)
                part[j] += (long long)rint(fmin(oi, (lo + (j + 1) * step) * si));
        }
        for (int j = 0; j < SECTIONS - 1; ++j) {
            long long v = warp_sum(part[j]);
            if ((tid & 31) == 0) red7[j][tid >> 5] = v;
        }
        __syncthreads();
        int first = SECTIONS;  // the first point where enough records are freed
        for (int j = SECTIONS - 2; j >= 0; --j) {
            long long sum = 0;
            for (unsigned int w = 0; w < nw; ++w) sum += red7[j][w];
            if (sum >= total) first = j + 1;
        }
        __syncthreads();
        double new_lo = lo + (first - 1) * step;
        hi = first < SECTIONS ? lo + first * step : hi;
        lo = new_lo;
    }
    if (tid == 0) *beta = hi;
    for (long long i = tid; i < n; i += nt) work[i] = rint(fmin(over[i], hi * (double)s[i]));
    __syncthreads();
    apportion(n, work, total, over, rem, red, bins, shared_k);
    __syncthreads();  // add and rem were written under another ownership
    plan_scans(n, s, add, rem, offset, cumadd, cumrem, red);
}


// the prefix sums alone, for add/rem that did not come from plan_update
extern "C" __global__ void gum_prep(long long n, const long long* s, const long long* add,
                                    const long long* rem, long long* offset, long long* cumadd,
                                    long long* cumrem) {
    __shared__ long long red[PLAN_MAX_WARPS];
    plan_scans(n, s, add, rem, offset, cumadd, cumrem, red);
}
