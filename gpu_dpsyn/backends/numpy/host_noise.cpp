// backends/cuda/noise.cu compiled for the CPU: the same exact samplers, element by element.
#include "host.h"
#include "noise.cu"

// elements lo .. hi - 1 of noise_draws' n (a block of threads.each)
extern "C" void host_noise_draws(long long lo, long long hi, long long n,
                                 const unsigned int* key, unsigned int stream,
                                 unsigned long long max_words, long long m,
                                 const long long* ends, const unsigned long long* params,
                                 long long* out, unsigned char* status) {
    for (long long i = lo; i < hi; ++i) {
        threadIdx.x = (unsigned int)i;
        noise_draws(n, key, stream, max_words, m, ends, params, out, status);
    }
}
