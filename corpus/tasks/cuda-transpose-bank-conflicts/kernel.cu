#include <cuda_runtime.h>

#define TILE 32
#define ROWS 8

__global__ void transpose(float* __restrict__ out, const float* __restrict__ in, int rows, int cols) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) {
    if (x < cols && y + j < rows) {
      tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    }
  }
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) {
    if (x < rows && y + j < cols) {
      out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
  }
}

cudaError_t transpose_launch(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  dim3 block(TILE, ROWS);
  dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
  transpose<<<grid, block, 0, stream>>>(out, in, rows, cols);
  return cudaGetLastError();
}
