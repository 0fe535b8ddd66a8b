// Host emulation of the CUDA built-ins our kernels use, so the .cu sources can be
// compiled by g++ and run one thread at a time (blockDim = 1) in tests without a GPU.
#pragma once
#include <cmath>
using std::floor; using std::log; using std::exp; using std::fabs; using std::fmin;
using std::rint;
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__
struct emu_dim3 { unsigned int x, y, z; };
extern emu_dim3 blockIdx, threadIdx, blockDim, gridDim;
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
inline int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline unsigned int atomicAdd(unsigned int* p, unsigned int v) { unsigned int o = *p; *p += v; return o; }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    unsigned long long o = *p; *p += v; return o;
}
inline void __syncthreads() {}
