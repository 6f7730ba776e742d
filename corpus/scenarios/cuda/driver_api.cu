// Uses the CUDA driver API directly, so it must link against libcuda (shipped with the driver, not the toolkit).
#include <cstdio>
#include <cuda.h>
int main() {
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) { const char *s; cuGetErrorString(r, &s); printf("cuInit: %s\n", s); return 1; }
    int n = 0; cuDeviceGetCount(&n);
    printf("%d devices\n", n);
    return 0;
}
