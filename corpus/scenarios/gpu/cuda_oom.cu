// Sizes a workspace from a wrong formula: 1 TiB of device memory.
#include "_check.h"
int main() {
    size_t free_b, total_b;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    printf("free %zu bytes of %zu\n", free_b, total_b);
    void *p;
    size_t want = 1ull << 40;
    printf("cudaMalloc(%zu bytes)\n", want);
    CHECK(cudaMalloc(&p, want));
    printf("ok\n");
    return 0;
}
