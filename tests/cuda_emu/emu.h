// Host emulation of the CUDA built-ins our kernels use, so the .cu sources can be
// compiled by g++ and run on the CPU in tests without a GPU.  Two modes:
//  - one thread at a time, each its own block of one (blockDim = 1): the data-parallel
//    kernels, which never talk between threads;
//  - one block of real threads (emu_coop_begin): the block-cooperative kernels of
//    plan.cu, with __syncthreads a barrier, __shared__ storage shared by the threads
//    (compiled with EMU_SHARED_STATIC) and real atomics, so a missing barrier shows.
#pragma once
#include <cmath>
using std::floor; using std::log; using std::exp; using std::fabs; using std::fmin;
using std::rint;
#define __global__
#define __device__
#define __forceinline__ inline
#ifdef EMU_SHARED_STATIC
#define __shared__ static
#else
#define __shared__
#endif
struct emu_dim3 { unsigned int x, y, z; };
extern emu_dim3 blockIdx, blockDim, gridDim;
extern thread_local emu_dim3 threadIdx;
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
inline int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline unsigned int atomicAdd(unsigned int* p, unsigned int v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
void __syncthreads();
