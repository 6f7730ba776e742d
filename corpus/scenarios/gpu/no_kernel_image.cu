// Built with only an sm_80 cubin and no PTX (-gencode arch=compute_80,code=sm_80), run on a newer GPU.
#include "_check.h"
__global__ void inc(float *x) { x[threadIdx.x] += 1.f; }
int main() {
    int dev; cudaDeviceProp p;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaGetDeviceProperties(&p, dev));
    printf("device: %s (sm_%d%d)\n", p.name, p.major, p.minor);
    float *x;
    CHECK(cudaMalloc(&x, 1024));
    inc<<<1, 256>>>(x);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
