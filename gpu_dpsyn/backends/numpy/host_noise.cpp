// backends/cuda/noise.cu compiled for the CPU: the same exact samplers, element by element.
#include "host.h"
#include "noise.cu"

extern "C" void host_discrete_gaussian(long long n, const unsigned int* key,
                                       unsigned int stream, unsigned int call,
                                       unsigned long long max_words, unsigned long long t,
                                       unsigned long long qt, unsigned long long p,
                                       unsigned long long den_hi, unsigned long long den_lo,
                                       long long* out, unsigned char* status) {
    for (long long i = 0; i < n; ++i) {
        threadIdx.x = (unsigned int)i;
        discrete_gaussian(n, key, stream, call, max_words, t, qt, p, den_hi, den_lo, out,
                          status);
    }
}

extern "C" void host_discrete_laplace(long long n, const unsigned int* key,
                                      unsigned int stream, unsigned int call,
                                      unsigned long long max_words, unsigned long long t,
                                      unsigned long long s, long long* out,
                                      unsigned char* status) {
    for (long long i = 0; i < n; ++i) {
        threadIdx.x = (unsigned int)i;
        discrete_laplace(n, key, stream, call, max_words, t, s, out, status);
    }
}
