#include <pthread.h>
#include "emu.h"
emu_dim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
thread_local emu_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0};
unsigned int sh[1 << 20];  // the one extern __shared__ array (histogram.cu)
static pthread_barrier_t barrier, entry;  // __syncthreads; the start of each block
static bool cooperative = false, made = false;

void __syncthreads() {
    if (cooperative) pthread_barrier_wait(&barrier);
}

// one thread at a time: thread `block` of `grid` runs as block `block` of one thread
extern "C" void emu_set(unsigned int block, unsigned int grid) {
    cooperative = false;
    blockIdx.x = block; gridDim.x = grid; blockDim.x = 1; threadIdx.x = 0;
}

// every block of a grid in turn, each as n concurrent threads: the threads call
// emu_enter(b, tid) before running block b, and no thread starts a block before all
// have finished the last (its __shared__ storage is the next block's).  A thread that
// leaves a block early waits here while the others wait at __syncthreads: the deadlock
// a real block risks there too.
extern "C" void emu_blocks_begin(unsigned int grid, unsigned int n) {
    if (made) {  // for n threads, made afresh
        pthread_barrier_destroy(&barrier);
        pthread_barrier_destroy(&entry);
    }
    pthread_barrier_init(&barrier, nullptr, n);
    pthread_barrier_init(&entry, nullptr, n);
    made = cooperative = true;
    gridDim.x = grid; blockDim.x = n;
}

extern "C" void emu_enter(unsigned int block, unsigned int tid) {
    pthread_barrier_wait(&entry);
    blockIdx.x = block; threadIdx.x = tid;
}
