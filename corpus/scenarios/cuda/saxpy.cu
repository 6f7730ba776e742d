// A correct SAXPY kernel and launcher: used for the arch and driver scenarios.
#include <cstdio>
__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "CUDA error at %s:%d: %s (%s)\n", __FILE__, __LINE__, cudaGetErrorString(e_), cudaGetErrorName(e_)); \
    return 1; } } while (0)

int main() {
    const int n = 1 << 20;
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    printf("CUDA driver version %d, runtime version %d\n", driver, runtime);
    float *x, *y;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
