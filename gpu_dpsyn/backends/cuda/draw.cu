// The rows' CDFs for draws from a table of conditionals (generate/gum.py, draw_rows):
// row r's running sum, capped at 1, its last entry set to 1, plus r, so the rows lie end
// to end in one sorted array; and each row's last value of positive probability.
// One thread a row, adding in order: the additions NumPy's cumsum makes, so the same
// bits (compiled without FMA contraction, as every kernel here).  Rows lo .. hi - 1 (the
// host build takes blocks of rows on its cores).
#include "common.cuh"

extern "C" __global__ void cdf_rows(long long lo, long long hi, int size, const double* cond,
                                    double* flat, long long* last) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long r = lo + (long long)blockIdx.x * blockDim.x + threadIdx.x; r < hi;
         r += stride) {
        const double* p = cond + r * size;
        double* out = flat + r * size;
        const double base = (double)r;
        double acc = 0.0;
        long long at = size - 1;  // no positive value: the last (NumPy's argmax of none)
        bool seen = false;
        for (int j = 0; j < size; ++j) {
            const double x = p[j];
            acc = j ? acc + x : x;
            if (x > 0.0) { at = j; seen = true; }
            const double capped = acc > 1.0 ? 1.0 : acc;  // np.minimum: NaN stays NaN
            out[j] = (j == size - 1 ? 1.0 : capped) + base;
        }
        last[r] = seen ? at : (long long)(size - 1);
    }
}
