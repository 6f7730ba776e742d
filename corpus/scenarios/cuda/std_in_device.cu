// Calls std::sort inside a kernel: the host C++ library is not available in device code.
#include <algorithm>
__global__ void sort_rows(int *x, int cols) {
    int *row = x + blockIdx.x * cols;
    std::sort(row, row + cols);
}
