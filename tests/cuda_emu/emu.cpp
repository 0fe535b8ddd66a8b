#include <pthread.h>
#include "emu.h"
emu_dim3 blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
thread_local emu_dim3 threadIdx = {0, 0, 0};
unsigned int sh[1 << 20];  // the one extern __shared__ array (histogram.cu)
static pthread_barrier_t barrier;
static bool cooperative = false;

void __syncthreads() {
    if (cooperative) pthread_barrier_wait(&barrier);
}

// one thread at a time: thread `block` of `grid` runs as block `block` of one thread
extern "C" void emu_set(unsigned int block, unsigned int grid) {
    cooperative = false;
    blockIdx.x = block; gridDim.x = grid; blockDim.x = 1; threadIdx.x = 0;
}

// one block of n concurrent threads; each calls emu_thread(tid) before the kernel
extern "C" void emu_coop_begin(unsigned int n) {
    if (cooperative) pthread_barrier_destroy(&barrier);
    pthread_barrier_init(&barrier, nullptr, n);
    cooperative = true;
    blockIdx.x = 0; gridDim.x = 1; blockDim.x = n;
}

extern "C" void emu_thread(unsigned int tid) { threadIdx.x = tid; }
