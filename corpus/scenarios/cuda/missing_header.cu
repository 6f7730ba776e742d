// The kernel includes a project header that is not on the include path.
#include "tile_config.cuh"
__global__ void fill(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = TILE_FILL_VALUE;
}
