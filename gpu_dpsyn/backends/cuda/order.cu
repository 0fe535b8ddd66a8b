// GUM's records in (cell, index) order by a stable counting sort (updates.cell_order): two
// launches around one scan, where radix sorts make a pass a key byte.
// The records fall in tiles of `tile` consecutive indices, one a block.
//  - tile_counts: each tile's count of every cell, laid out cell-major after a leading 0
//    (counts[1 + c * ntiles + b]), so that their inclusive prefix sum (a CuPy cumsum) at
//    c * ntiles + b is where tile b's records of cell c start in the order;
//  - tile_scatter: a block walks its tile in index order, a chunk of blockDim records at
//    a time.  A record goes to its cell's cursor plus its rank among the chunk's earlier
//    records of that cell: within a warp by matching the cells (__match_any_sync), across
//    warps by taking the cursors one warp after another.  The result is the same however
//    the threads are scheduled: every place is a rank, never an atomic's order.
// ncells + blockDim unsigned ints of shared memory; blockDim a multiple of 32.

extern "C" __global__ void tile_counts(long long n, const int* cell, int ncells,
                                       long long tile, int ntiles, unsigned int* counts) {
    extern __shared__ unsigned int sh[];
    for (int c = threadIdx.x; c < ncells; c += blockDim.x) sh[c] = 0u;
    __syncthreads();
    long long lo = (long long)blockIdx.x * tile, hi = lo + tile < n ? lo + tile : n;
    for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) atomicAdd(&sh[cell[i]], 1u);
    __syncthreads();
    for (int c = threadIdx.x; c < ncells; c += blockDim.x)
        counts[1 + (long long)c * ntiles + blockIdx.x] = sh[c];
    if (blockIdx.x == 0 && threadIdx.x == 0) counts[0] = 0u;
}

extern "C" __global__ void tile_scatter(long long n, const int* cell, int ncells,
                                        long long tile, int ntiles, const unsigned int* start,
                                        unsigned int* order) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700  // no __match_any_sync: never launched
    __trap();                                       // there (updates.cell_order)
#else
    extern __shared__ unsigned int sh[];
    unsigned int* cursor = sh;  // where the tile's next record of each cell goes
    unsigned int* base = sh + ncells;  // a group leader's cursor, for its peers
    for (int c = threadIdx.x; c < ncells; c += blockDim.x)
        cursor[c] = start[(long long)c * ntiles + blockIdx.x];
    __syncthreads();
    long long lo = (long long)blockIdx.x * tile, hi = lo + tile < n ? lo + tile : n;
    unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    int next = lo + threadIdx.x < hi ? cell[lo + threadIdx.x] : -1;
    for (long long at = lo; at < hi; at += blockDim.x) {  // the same trips for every thread
        long long i = at + threadIdx.x, ahead = i + blockDim.x;
        int c = next;
        next = ahead < hi ? cell[ahead] : -1;  // the next chunk's, loading meanwhile
        unsigned int peers = __match_any_sync(0xffffffffu, c);
        unsigned int rank = __popc(peers & ((1u << lane) - 1u));
        unsigned int leader = (unsigned int)(__ffs((int)peers) - 1);
        for (unsigned int w = 0; w < nwarps; ++w) {
            if (w == warp && lane == leader && c >= 0) {
                base[threadIdx.x] = cursor[c];
                cursor[c] += __popc(peers);
            }
            __syncthreads();
        }
        if (c >= 0) order[base[(warp << 5) + leader] + rank] = (unsigned int)i;
        __syncthreads();  // base is the next chunk's
    }
#endif
}
