// Host emulation of the CUDA built-ins our kernels use, so the .cu sources can be
// compiled by g++ and run on the CPU in tests without a GPU.  Two modes:
//  - one thread at a time, each its own block of one (blockDim = 1): the data-parallel
//    kernels, which never talk between threads;
//  - every block of the grid in turn as real threads (emu_blocks_begin): the
//    block-cooperative kernels of plan.cu always, any kernel in emulate.py's blocks
//    mode; __syncthreads a barrier, __shared__ storage shared by the threads (compiled
//    with EMU_SHARED_STATIC where the kernels declare some), warps' shuffles and real
//    atomics, so a missing barrier shows.
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
extern emu_dim3 blockDim, gridDim;
extern thread_local emu_dim3 blockIdx, threadIdx;
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
inline int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline unsigned int __popc(unsigned int x) { return (unsigned int)__builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned int atomicAdd(unsigned int* p, unsigned int v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline double atomicAdd(double* p, double v) {  // a compare-and-swap loop, as CUDA's
    double seen, want;
    __atomic_load(p, &seen, __ATOMIC_RELAXED);
    do {
        want = seen + v;
    } while (!__atomic_compare_exchange(p, &seen, &want, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    return seen;
}
void __syncthreads();

// warp shuffles, for kernels whose threads all reach them together (the block-wide
// reductions of plan.cu): exchange through memory between two barriers
template <typename T> T emu_exchange(T v, unsigned int src) {
    static T slot[1024];
    slot[threadIdx.x] = v;
    __syncthreads();
    T r = slot[src];
    __syncthreads();
    return r;
}
template <typename T> T __shfl_xor_sync(unsigned int, T v, int m) {
    return emu_exchange(v, threadIdx.x ^ (unsigned int)m);
}
template <typename T> T __shfl_up_sync(unsigned int, T v, int d) {
    unsigned int lane = threadIdx.x & 31u;
    return emu_exchange(v, lane >= (unsigned int)d ? threadIdx.x - d : threadIdx.x);
}
// the lanes of the caller's warp holding the same value (blocks mode, every thread calls).
// Its two barriers are block-wide, where a device's match is the warp's alone: a missing
// __syncthreads right before or after one would not show here
template <typename T> unsigned int __match_any_sync(unsigned int, T v) {
    static T slot[1024];
    slot[threadIdx.x] = v;
    __syncthreads();
    unsigned int first = threadIdx.x & ~31u, mask = 0u;
    for (unsigned int l = 0; l < 32u && first + l < blockDim.x; ++l)
        if (slot[first + l] == v) mask |= 1u << l;
    __syncthreads();
    return mask;
}
