// Launches 2048 threads per block: the limit is 1024.
#include "_check.h"
__global__ void inc(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 1.f; }
int main() {
    float *x;
    CHECK(cudaMalloc(&x, 1 << 20));
    inc<<<64, 2048>>>(x);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
