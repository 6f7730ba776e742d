// A scatter kernel whose index table holds an out-of-range entry: the write lands far outside the buffer.
#include "_check.h"
__global__ void scatter(float *out, const int *idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[idx[i]] = 1.0f;
}
int main() {
    const int n = 1024;
    float *out; int *idx;
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    CHECK(cudaMallocManaged(&idx, n * sizeof(int)));
    for (int i = 0; i < n; ++i) idx[i] = i;
    idx[7] = 1 << 30;                         // bug: a corrupt index
    scatter<<<(n + 255) / 256, 256>>>(out, idx, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
