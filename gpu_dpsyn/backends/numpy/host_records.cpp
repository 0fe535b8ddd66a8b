// Record loops compiled for the CPU: GUM's removal permutation (feistel_perm of
// backends/cuda/common.cuh, as gum.cu's pick_removed uses it), a stable counting argsort
// (whole, or in blocks of records on the host's threads),
// the cells and counts of a marginal in one pass, and the draws' CDFs and search (draw.cu).
// The records' Philox words are host_philox.cpp's.
#include "host.h"
#include "common.cuh"

// pi(r[i]) for pi the bijection of [0, size[i]) salted by the low word of salt[i]
extern "C" void host_feistel_ranks(long long n, const long long* r, const long long* size,
                                   const long long* salt, const unsigned int* keys,
                                   long long* out) {
    for (long long i = 0; i < n; ++i)
        out[i] = feistel_perm(r[i], size[i], keys, (unsigned int)salt[i]);
}

// The stable argsort of keys in [0, bound) by counting: each key's count, their running
// sums as each key's first slot, then every index in order to its key's next slot.
// start holds bound entries of scratch.  Returns -1, having written nothing to out, when
// a key is out of range (a slot past out's end otherwise).
template <typename K>
static int counting_argsort(long long n, const K* key, long long bound, long long* start,
                            long long* out) {
    for (long long c = 0; c < bound; ++c) start[c] = 0;
    for (long long i = 0; i < n; ++i) {
        if (key[i] < 0 || (long long)key[i] >= bound) return -1;
        ++start[key[i]];
    }
    long long acc = 0;
    for (long long c = 0; c < bound; ++c) { long long s = start[c]; start[c] = acc; acc += s; }
    for (long long i = 0; i < n; ++i) out[start[key[i]]++] = i;
    return 0;
}

// The same sort in blocks of records on the host's threads: each block's counts
// (counting_block), then, from every block's, each block's first slot of each key (the
// keys before it, then that key's records in the blocks before it), then each block
// placing its indices in order (counting_place).  Blocks in order, each stable: the
// stable order, however the records are split.
template <typename K>
static int counting_block(long long lo, long long hi, const K* key, long long bound,
                          long long* count) {
    for (long long c = 0; c < bound; ++c) count[c] = 0;
    for (long long i = lo; i < hi; ++i) {
        if (key[i] < 0 || (long long)key[i] >= bound) return -1;
        ++count[key[i]];
    }
    return 0;
}

template <typename K>
static void counting_place(long long lo, long long hi, const K* key, long long* start,
                           long long* out) {
    for (long long i = lo; i < hi; ++i) out[start[key[i]]++] = i;
}

extern "C" int host_counting_block_u16(long long lo, long long hi, const unsigned short* key,
                                       long long bound, long long* count) {
    return counting_block(lo, hi, key, bound, count);
}

extern "C" int host_counting_block_i64(long long lo, long long hi, const long long* key,
                                       long long bound, long long* count) {
    return counting_block(lo, hi, key, bound, count);
}

extern "C" void host_counting_place_u16(long long lo, long long hi, const unsigned short* key,
                                        long long* start, long long* out) {
    counting_place(lo, hi, key, start, out);
}

extern "C" void host_counting_place_i64(long long lo, long long hi, const long long* key,
                                        long long* start, long long* out) {
    counting_place(lo, hi, key, start, out);
}

extern "C" int host_counting_argsort_u16(long long n, const unsigned short* key,
                                         long long bound, long long* start, long long* out) {
    return counting_argsort(n, key, bound, start, out);
}

extern "C" int host_counting_argsort_i64(long long n, const long long* key, long long bound,
                                         long long* start, long long* out) {
    return counting_argsort(n, key, bound, start, out);
}

// Each record's flat cell over 1 to 3 code columns and each cell's count, in one pass
// (NumPy's cell index and bincount make three or four), typed per column so the loop
// is a plain load, multiply and add (a per-element switch on the width was slower than
// NumPy).  Returns -1 when a cell falls outside [0, ncells): the caller then computes it
// as NumPy does, whatever that gives.
template <typename O, typename A, typename B, typename C>
static int cell_histogram_t(long long n, int k, const void* pa, const void* pb, const void* pc,
                            long long sa, long long sb, long long sc, long long ncells,
                            O* cell, long long* hist) {
    const A* a = (const A*)pa;
    const B* b = (const B*)pb;
    const C* c = (const C*)pc;
    for (long long x = 0; x < ncells; ++x) hist[x] = 0;
    for (long long i = 0; i < n; ++i) {
        long long x = (long long)a[i] * sa;
        if (k > 1) x += (long long)b[i] * sb;
        if (k > 2) x += (long long)c[i] * sc;
        if (x < 0 || x >= ncells) return -1;
        cell[i] = (O)x;
        ++hist[x];
    }
    return 0;
}

template <typename O, typename A, typename B>
static int cell_histogram_c(int wc, long long n, int k, const void* pa, const void* pb,
                            const void* pc, long long sa, long long sb, long long sc,
                            long long ncells, O* cell, long long* hist) {
    switch (wc) {
    case 1: return cell_histogram_t<O, A, B, unsigned char>(n, k, pa, pb, pc, sa, sb, sc, ncells, cell, hist);
    case 2: return cell_histogram_t<O, A, B, unsigned short>(n, k, pa, pb, pc, sa, sb, sc, ncells, cell, hist);
    default: return cell_histogram_t<O, A, B, unsigned int>(n, k, pa, pb, pc, sa, sb, sc, ncells, cell, hist);
    }
}

template <typename O, typename A>
static int cell_histogram_b(int wb, int wc, long long n, int k, const void* pa, const void* pb,
                            const void* pc, long long sa, long long sb, long long sc,
                            long long ncells, O* cell, long long* hist) {
    switch (wb) {
    case 1: return cell_histogram_c<O, A, unsigned char>(wc, n, k, pa, pb, pc, sa, sb, sc, ncells, cell, hist);
    case 2: return cell_histogram_c<O, A, unsigned short>(wc, n, k, pa, pb, pc, sa, sb, sc, ncells, cell, hist);
    default: return cell_histogram_c<O, A, unsigned int>(wc, n, k, pa, pb, pc, sa, sb, sc, ncells, cell, hist);
    }
}

template <typename O>
static int cell_histogram_a(int wa, int wb, int wc, long long n, int k, const void* pa,
                            const void* pb, const void* pc, long long sa, long long sb,
                            long long sc, long long ncells, O* cell, long long* hist) {
    switch (wa) {
    case 1: return cell_histogram_b<O, unsigned char>(wb, wc, n, k, pa, pb, pc, sa, sb, sc, ncells, cell, hist);
    case 2: return cell_histogram_b<O, unsigned short>(wb, wc, n, k, pa, pb, pc, sa, sb, sc, ncells, cell, hist);
    default: return cell_histogram_b<O, unsigned int>(wb, wc, n, k, pa, pb, pc, sa, sb, sc, ncells, cell, hist);
    }
}

// widths w*: bytes a code (1, 2 or 4); unused columns (k < 3) are never read
extern "C" int host_cell_histogram(long long n, int k, const void* pa, int wa, long long sa,
                                   const void* pb, int wb, long long sb, const void* pc, int wc,
                                   long long sc, long long ncells, int wide, void* cell,
                                   long long* hist) {
    if (wide)
        return cell_histogram_a<long long>(wa, wb, wc, n, k, pa, pb, pc, sa, sb, sc, ncells,
                                           (long long*)cell, hist);
    return cell_histogram_a<unsigned short>(wa, wb, wc, n, k, pa, pb, pc, sa, sb, sc, ncells,
                                            (unsigned short*)cell, hist);
}

// The rows' CDFs of a table of conditionals, rows lo .. hi - 1 (draw.cu, row by row)
#include "draw.cu"

extern "C" void host_cdf_rows(long long lo, long long hi, int size, const double* cond,
                              double* flat, long long* last) {
    threadIdx.x = 0;
    cdf_rows(lo, hi, size, cond, flat, last);
}

// draw_rows' draws for records lo .. hi - 1: q = row + u searched (upper bound) within
// its row's run of the CDFs laid end to end (generate/gum.py, row_search: the same
// probes), clipped to [0, size - 1] and to the row's last positive value
extern "C" void host_draw_rows(long long lo, long long hi, long long size, const double* flat,
                               long long nflat, const long long* row, const double* u,
                               const long long* last, long long* out) {
    for (long long i = lo; i < hi; ++i) {
        const double q = (double)row[i] + u[i];
        long long first = row[i] * size, length = size;
        while (length > 0) {
            const long long half = length / 2, mid = first + half;
            if (flat[mid < nflat ? mid : nflat - 1] <= q) {
                first = mid + 1;
                length -= half + 1;
            } else {
                length = half;
            }
        }
        long long at = first - row[i] * size;
        at = at < 0 ? 0 : (at > size - 1 ? size - 1 : at);
        out[i] = at < last[row[i]] ? at : last[row[i]];
    }
}
