// A register-hungry kernel (built with -maxrregcount=255) launched with 1024 threads per block:
// 1024 x ~255 registers exceeds the 65536-register file of one SM.
#include "_check.h"
#define N 96
__global__ void heavy(const float *x, float *y) {
    float acc[N];
    float v = x[threadIdx.x];
#pragma unroll
    for (int k = 0; k < N; ++k) acc[k] = v * (k + 1);
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int k = 0; k < N; ++k) acc[k] = acc[k] * acc[(k + r + 1) % N] + x[(threadIdx.x + k) & 1023];
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < N; ++k) s += acc[k];
    y[threadIdx.x] = s;
}
int main() {
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, heavy));
    printf("heavy: %d registers per thread, max %d threads per block\n", attr.numRegs, attr.maxThreadsPerBlock);
    float *x, *y;
    CHECK(cudaMalloc(&x, 1024 * sizeof(float)));
    CHECK(cudaMalloc(&y, 1024 * sizeof(float)));
    heavy<<<1, 1024>>>(x, y);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
