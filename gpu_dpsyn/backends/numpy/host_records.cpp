// The records' random words and GUM's removal permutation compiled for the CPU: the
// formulas of backends/cuda/common.cuh (philox4x32 as rng.cu's philox_fill uses it, from
// counter 0, and feistel_perm as gum.cu's pick_removed does), element by element.
#include "host.h"
#include "common.cuh"

// words 0 .. nw - 1 of philox(i, c1, c2, c3) for i in [0, n), word j at out[j * n + i]
extern "C" void host_philox_range(long long n, unsigned int k0, unsigned int k1,
                                  unsigned int c1, unsigned int c2, unsigned int c3,
                                  int nw, unsigned int* out) {
    for (long long i = 0; i < n; ++i) {
        u32x4 w = philox4x32((unsigned int)i, c1, c2, c3, k0, k1);
        const unsigned int words[4] = {w.x, w.y, w.z, w.w};
        for (int j = 0; j < nw; ++j) out[j * n + i] = words[j];
    }
}

// pi(r[i]) for pi the bijection of [0, size[i]) salted by the low word of salt[i]
extern "C" void host_feistel_ranks(long long n, const long long* r, const long long* size,
                                   const long long* salt, const unsigned int* keys,
                                   long long* out) {
    for (long long i = 0; i < n; ++i)
        out[i] = feistel_perm(r[i], size[i], keys, (unsigned int)salt[i]);
}
