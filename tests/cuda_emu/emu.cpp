#include <pthread.h>
#include "emu.h"
emu_dim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
thread_local emu_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0};
unsigned int sh[1 << 20];  // the one extern __shared__ array (histogram.cu)
static pthread_barrier_t barrier, entry;  // __syncthreads; the start of each block
static bool cooperative = false, have_barrier = false, have_entry = false;

void __syncthreads() {
    if (cooperative) pthread_barrier_wait(&barrier);
}

// one thread at a time: thread `block` of `grid` runs as block `block` of one thread
extern "C" void emu_set(unsigned int block, unsigned int grid) {
    cooperative = false;
    blockIdx.x = block; gridDim.x = grid; blockDim.x = 1; threadIdx.x = 0;
}

static void barriers(unsigned int n, bool with_entry) {  // for n threads, made afresh
    if (have_barrier) pthread_barrier_destroy(&barrier);
    if (have_entry) pthread_barrier_destroy(&entry);
    pthread_barrier_init(&barrier, nullptr, n);
    if (with_entry) pthread_barrier_init(&entry, nullptr, n);
    have_barrier = true, have_entry = with_entry;
}

// one block of n concurrent threads; each calls emu_thread(tid) before the kernel
extern "C" void emu_coop_begin(unsigned int n) {
    barriers(n, false);
    cooperative = true;
    blockIdx.x = 0; gridDim.x = 1; blockDim.x = n;
}

extern "C" void emu_thread(unsigned int tid) { threadIdx.x = tid; }

// every block of a grid in turn, each as n concurrent threads: the threads call
// emu_enter(b, tid) before running block b, and no thread starts a block before all
// have finished the last (its __shared__ storage is the next block's).  A thread that
// leaves a block early waits here while the others wait at __syncthreads: the deadlock
// a real block risks there too.
extern "C" void emu_blocks_begin(unsigned int grid, unsigned int n) {
    barriers(n, true);
    cooperative = true;
    gridDim.x = grid; blockDim.x = n;
}

extern "C" void emu_enter(unsigned int block, unsigned int tid) {
    pthread_barrier_wait(&entry);
    blockIdx.x = block; threadIdx.x = tid;
}
