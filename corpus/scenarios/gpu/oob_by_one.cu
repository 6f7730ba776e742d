// The classic off-by-one: the bounds check uses <= so thread n writes one element past the end.
#include "_check.h"
__global__ void fill(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) x[i] = 0.0f;
}
int main() {
    const int n = 1000;
    float *x;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    fill<<<4, 256>>>(x, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
