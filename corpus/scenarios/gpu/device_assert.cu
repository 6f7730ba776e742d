// A gather kernel that asserts its class ids are in range; one label is 1000 for a 1000-class table.
#include <cassert>
#include "_check.h"
__global__ void gather(const float *table, const int *ids, float *out, int n, int classes) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        assert(ids[i] >= 0 && ids[i] < classes);
        out[i] = table[ids[i]];
    }
}
int main() {
    const int n = 256, classes = 1000;
    float *table, *out; int *ids;
    CHECK(cudaMalloc(&table, classes * sizeof(float)));
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    CHECK(cudaMallocManaged(&ids, n * sizeof(int)));
    for (int i = 0; i < n; ++i) ids[i] = i;
    ids[42] = classes;                       // bug: labels are 1-based in the data file
    gather<<<1, n>>>(table, ids, out, n, classes);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
