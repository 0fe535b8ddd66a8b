// GUM's record update on the host: backends/cuda/gum.cu's removal and fill kernels, one
// slot after another within a block (the removal's body written out here, its per-thread
// set-up hoisted), so the NumPy backend moves the records the GPU moves (the same Philox
// words, Feistel ranks and Duplicate/Replace rule).  The (cell, index) order comes from
// the caller's counting sort as plain indices, read through order_at with every bit an
// index bit.  A donor lies in an under cell and a removed record in an over cell (no
// cell is both: the wrapper checks), so no slot reads a record another slot writes: one
// at a time is the same as all at once, and blocks of slots can run on the host's
// threads: the removals of slots lo .. hi - 1 (phase 0), then, once every block has
// them, their fills (phase 1).
#include "host.h"
#include "gum.cu"

extern "C" void host_gum_apply(long long lo, long long hi, int phase, long long total,
                               const unsigned long long* order,
                               long long ncells, const long long* s, const long long* offset,
                               const long long* rem, const long long* cumrem,
                               const long long* cumadd, unsigned int k0, unsigned int k1,
                               unsigned int update, unsigned int call, double dup_frac,
                               const unsigned long long* colptr, const int* colsize,
                               int ncols, const unsigned long long* allptr,
                               const int* allsize, int k, int a0, int a1, int a2,
                               long long st0, long long st1, long long st2, long long d0,
                               long long d1, long long d2, long long* removed) {
    const int every_bit = 63;  // order holds indices below 2^63
    // pick_removed_t's body with its round keys made once (a thread makes its own: four
    // Philox blocks a slot, most of the host's time) and the slots' cells walked in
    // order (upper_bound's answers, slot by slot)
    if (phase == 0) {
        unsigned int rk[4];
        round_keys(rk, STREAM_GUM_SORT, update, call, k0, k1);
        long long c = lo < total ? upper_bound(cumrem, ncells, lo) : ncells;
        for (long long j = lo; j < hi; ++j) {
            while (c < ncells && cumrem[c] <= j) ++c;
            const long long r = j - (cumrem[c] - rem[c]);
            removed[j] = order_at(order, offset[c] + feistel_perm(r, s[c], rk, (unsigned int)c),
                                  every_bit);
        }
        return;
    }
    // fill_slots_t's body for each slot, the cells walked in order as above (a search a
    // slot was about a sixth of the fill's time), pipelined: slot j + AHEAD's donor is
    // found, and its and its destination's column bytes fetched, while slot j is written
    // (a slot's columns are as many cache misses, which otherwise came one after another)
    const int AHEAD = 16;
    long long dst[AHEAD], donor[AHEAD], cell[AHEAD];
    const int attr[3] = {a0, a1, a2};  // the columns a Replace writes
    const long long end = hi < total ? hi : total;
    long long c = lo < total ? upper_bound(cumadd, ncells, lo) : ncells;
    for (long long j = lo; j < end + AHEAD; ++j) {
        const int at = (int)(j % AHEAD);  // slot j - AHEAD's place, then slot j's
        if (j - AHEAD >= lo)
            fill_record(dst[at], donor[at], cell[at], colptr, colsize, ncols, allptr, allsize,
                        k, a0, a1, a2, st0, st1, st2, d0, d1, d2);
        if (j < end) {
            while (c < ncells && cumadd[c] <= j) ++c;
            dst[at] = removed[j];
            donor[at] = slot_donor(j, c, s, offset, order, every_bit, k0, k1, update, call,
                                   dup_frac);
            cell[at] = c;
            if (donor[at] >= 0) {
                for (int a = 0; a < ncols; ++a) {
                    __builtin_prefetch((const char*)colptr[a] + donor[at] * colsize[a]);
                    __builtin_prefetch((const char*)colptr[a] + dst[at] * colsize[a], 1);
                }
            } else {
                for (int a = 0; a < k; ++a)
                    __builtin_prefetch((const char*)allptr[attr[a]] +
                                       dst[at] * allsize[attr[a]], 1);
            }
        }
    }
}
