// The cell-level GUM plan in one launch of one block (gpu_dpsyn.gum.plan_update, the same
// float64 arithmetic step for step): on the GPU the NumPy-style version costs ~400 small
// launches an update (48 bisection steps, two apportionments), which is all overhead.
// Then gum_prep: the prefix sums and Feistel round keys the record pass needs.
// Sums of integer-valued doubles are exact in any order (< 2^53), so a block reduction
// gives NumPy's sum bit for bit.  Any blockDim that is a power of two works (the CPU
// emulation in tests/cuda_emu runs it with one thread).
#include "common.cuh"

#define PLAN_MAX_THREADS 256
#define BISECT_STEPS 48
#define SECTIONS 8  // bisection 3 steps at a time: 7 points per barrier round

__device__ long long block_sum(long long v, long long* red) {
    unsigned int t = threadIdx.x;
    red[t] = v;
    __syncthreads();
    for (unsigned int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (t < h) red[t] += red[t + h];
        __syncthreads();
    }
    long long r = red[0];
    __syncthreads();
    return r;
}

// exclusive prefix sum over the threads of the block (Hillis-Steele)
__device__ long long block_exclusive_scan(long long v, long long* red) {
    unsigned int t = threadIdx.x;
    red[t] = v;
    __syncthreads();
    for (unsigned int off = 1; off < blockDim.x; off <<= 1) {
        long long add = t >= off ? red[t - off] : 0;
        __syncthreads();
        red[t] += add;
        __syncthreads();
    }
    long long r = red[t] - v;
    __syncthreads();
    return r;
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

extern "C" __global__ void plan_update(long long n, const long long* s, const double* t,
                                       double alpha, double* over, double* work,
                                       long long* add, long long* rem, double* beta) {
    __shared__ long long red[PLAN_MAX_THREADS];
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
    __shared__ long long red7[SECTIONS - 1][PLAN_MAX_THREADS];
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
        for (int j = 0; j < SECTIONS - 1; ++j) red7[j][tid] = part[j];
        __syncthreads();
        for (unsigned int h = nt / 2; h > 0; h >>= 1) {
            if (tid < h)
                for (int j = 0; j < SECTIONS - 1; ++j) red7[j][tid] += red7[j][tid + h];
            __syncthreads();
        }
        int first = SECTIONS;  // the first point where enough records are freed
        for (int j = SECTIONS - 2; j >= 0; --j)
            if (red7[j][0] >= total) first = j + 1;
        __syncthreads();
        double new_lo = lo + (first - 1) * step;
        hi = first < SECTIONS ? lo + first * step : hi;
        lo = new_lo;
    }
    if (tid == 0) *beta = hi;
    for (long long i = tid; i < n; i += nt) work[i] = rint(fmin(over[i], hi * (double)s[i]));
    __syncthreads();
    apportion(n, work, total, over, rem, red, bins, shared_k);
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

// what the record pass needs: offset = cumsum(s) - s, cumadd, cumrem, and the two sets
// of Feistel round keys (cpu_fallback.permute.round_keys) for this update
extern "C" __global__ void gum_prep(long long n, const long long* s, const long long* add,
                                    const long long* rem, long long* offset, long long* cumadd,
                                    long long* cumrem, unsigned int k0, unsigned int k1,
                                    unsigned int update, unsigned int call,
                                    unsigned int* round_keys) {
    __shared__ long long red[PLAN_MAX_THREADS];
    block_cumsum(n, s, offset, true, red);
    block_cumsum(n, add, cumadd, false, red);
    block_cumsum(n, rem, cumrem, false, red);
    if (threadIdx.x < 8) {
        unsigned int r = threadIdx.x & 3u, stream = threadIdx.x < 4 ? STREAM_GUM_SORT
                                                                    : STREAM_GUM_PAIR;
        round_keys[threadIdx.x] = philox4x32(r, update, stream, call, k0, k1).x;
    }
    if (blockDim.x < 8 && threadIdx.x == 0)  // fewer threads (the CPU emulation): loop
        for (unsigned int j = 0; j < 8; ++j)
            round_keys[j] = philox4x32(j & 3u, update, j < 4 ? STREAM_GUM_SORT : STREAM_GUM_PAIR,
                                       call, k0, k1).x;
}
