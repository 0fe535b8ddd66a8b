// The records' random words compiled for the CPU: philox4x32 of backends/cuda/common.cuh,
// as rng.cu's philox_fill uses it (from counter 0).  A unit of its own, so that the native
// build vectorises it (host_build.NATIVE): there one loop a word, each element a function
// of its counter alone, which the compiler runs several counters at a time (integer
// arithmetic: the same words whatever the vector unit).
#include "host.h"
#include "common.cuh"

// word J of philox(i, c1, c2, c3) for i in [lo, hi), at out[i]
template <int J>
static void word_range(long long lo, long long hi, unsigned int k0, unsigned int k1,
                       unsigned int c1, unsigned int c2, unsigned int c3,
                       unsigned int* __restrict out) {
    for (long long i = lo; i < hi; ++i) {
        u32x4 w = philox4x32((unsigned int)i, c1, c2, c3, k0, k1);
        out[i] = J == 0 ? w.x : J == 1 ? w.y : J == 2 ? w.z : w.w;
    }
}

// words 0 .. nw - 1 of philox(i, c1, c2, c3) for i in [lo, hi), word j at out[j * n + i]
// (blocks of counters on the host's threads).  Built for a vector unit (AVX2 or AVX-512:
// the native build), a loop a word: one word (the uniforms) took 2.8 ns a counter and two
// 5.8, against 17 for the four words computed once with the copies in the loop.  Without
// one, the four words once a counter: a loop a word would compute them nw times
extern "C" void host_philox_range(long long lo, long long hi, long long n, unsigned int k0,
                                  unsigned int k1, unsigned int c1, unsigned int c2,
                                  unsigned int c3, int nw, unsigned int* out) {
#if defined(__AVX2__) || defined(__AVX512F__)
    if (nw > 0) word_range<0>(lo, hi, k0, k1, c1, c2, c3, out);
    if (nw > 1) word_range<1>(lo, hi, k0, k1, c1, c2, c3, out + n);
    if (nw > 2) word_range<2>(lo, hi, k0, k1, c1, c2, c3, out + 2 * n);
    if (nw > 3) word_range<3>(lo, hi, k0, k1, c1, c2, c3, out + 3 * n);
#else
    for (long long i = lo; i < hi; ++i) {
        u32x4 w = philox4x32((unsigned int)i, c1, c2, c3, k0, k1);
        const unsigned int words[4] = {w.x, w.y, w.z, w.w};
        for (int j = 0; j < nw; ++j) out[j * n + i] = words[j];
    }
#endif
}
