// Written for CUDA <= 12: cudaThreadSynchronize was deprecated in CUDA 4 and is gone from CUDA 13.
#include <cstdio>
__global__ void noop() {}
int main() {
    noop<<<1, 1>>>();
    cudaThreadSynchronize();
    return 0;
}
