// Integer noise per cell from the counter RNG, as cpu_fallback/noise.py:
// discrete Gaussian (Canonne-Kamath-Steinke: discrete Laplace proposal + Bernoulli
// acceptance; trial k of cell i uses counter (i, k, NOISE, call)) and discrete Laplace.
#include "common.cuh"

__device__ __forceinline__ double geometric(double u, double t) { return floor(-t * log(u)); }

extern "C" __global__ void discrete_gaussian(long long n, unsigned int k0, unsigned int k1,
                                             double sigma, unsigned int call, long long* out) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double t = floor(sigma) + 1.0, s2 = sigma * sigma, bias = s2 / t;
    for (unsigned int trial = 0; trial < 256u; ++trial) {
        u32x4 w = philox4x32((unsigned int)i, trial, STREAM_NOISE, call, k0, k1);
        double y = geometric(u01(w.x), t) - geometric(u01(w.y), t);
        double d = fabs(y) - bias;
        if (u01(w.z) < exp(-(d * d) / (2.0 * s2))) { out[i] = (long long)y; return; }
    }
    out[i] = 0;  // not reached: every trial accepts with probability > 0.4
}

extern "C" __global__ void discrete_laplace(long long n, unsigned int k0, unsigned int k1,
                                            double scale, unsigned int call, long long* out) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u32x4 w = philox4x32((unsigned int)i, 0u, STREAM_NOISE, call, k0, k1);
    out[i] = (long long)(geometric(u01(w.x), scale) - geometric(u01(w.y), scale));
}
