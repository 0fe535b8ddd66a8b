#include "emu.h"
emu_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
unsigned int sh[1 << 20];  // the one extern __shared__ array (histogram.cu)
extern "C" void emu_set(unsigned int block, unsigned int grid) {
    blockIdx.x = block; gridDim.x = grid; blockDim.x = 1; threadIdx.x = 0;
}
