// Opts in to 300 KiB of dynamic shared memory: H100/H200 allow at most 227 KiB per block.
#include "_check.h"
extern __shared__ float tile[];
__global__ void stage(const float *x, float *y) { tile[threadIdx.x] = x[threadIdx.x]; __syncthreads(); y[threadIdx.x] = tile[255 - threadIdx.x]; }
int main() {
    int dev, optin;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    int want = 300 * 1024;
    printf("requesting %d bytes of dynamic shared memory (opt-in limit %d)\n", want, optin);
    CHECK(cudaFuncSetAttribute(stage, cudaFuncAttributeMaxDynamicSharedMemorySize, want));
    float *x, *y;
    CHECK(cudaMalloc(&x, 1024)); CHECK(cudaMalloc(&y, 1024));
    stage<<<1, 256, want>>>(x, y);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
