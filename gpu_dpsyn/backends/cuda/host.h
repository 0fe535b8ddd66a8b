// Host build of the data-parallel kernels (backends/numpy/host_kernels.py): a loop over
// the elements stands in for the grid, one element per "thread".
#pragma once
#include <cmath>
#define __global__
#define __device__
#define __forceinline__ inline
struct host_dim3 { unsigned int x, y, z; };
static const host_dim3 blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
static thread_local host_dim3 threadIdx = {0, 0, 0};
inline int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
