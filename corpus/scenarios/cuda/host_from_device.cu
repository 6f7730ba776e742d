// A kernel calls a host-only helper: device code cannot call __host__ functions.
#include <cmath>
float host_gelu(float x) { return 0.5f * x * (1.0f + std::tanh(0.79788456f * (x + 0.044715f * x * x * x))); }

__global__ void gelu(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = host_gelu(x[i]);
}
