// A block reduction missing a __syncthreads() between steps: a shared-memory race racecheck reports.
#include "_check.h"
__global__ void reduce(const float *x, float *out) {
    __shared__ float s[256];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        // bug: no __syncthreads() here
    }
    if (threadIdx.x == 0) *out = s[0];
}
int main() {
    float *x, *out;
    CHECK(cudaMalloc(&x, 256 * sizeof(float)));
    CHECK(cudaMemset(x, 0, 256 * sizeof(float)));
    CHECK(cudaMalloc(&out, sizeof(float)));
    reduce<<<1, 256>>>(x, out);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
