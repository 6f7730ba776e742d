// Profiling target for corpus/gpu/run.sh: three transposes of the same 8192x8192 float matrix, so one
// Nsight Compute / Nsight Systems capture shows an uncoalesced kernel (naive), a bank-conflicted one
// (tile[32][32]) and the padded fix (tile[32][33]).
#include <cstdio>
#include <cuda_runtime.h>

#define TILE 32
#define ROWS 8

__global__ void transpose_naive(float* out, const float* in, int n) {
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < n && y + j < n) out[x * n + (y + j)] = in[(y + j) * n + x];
}

template <int PAD>
__global__ void transpose_tiled(float* out, const float* in, int n) {
  __shared__ float tile[TILE][TILE + PAD];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < n && y + j < n) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  const int n = 8192;
  float *in, *out;
  if (cudaMalloc(&in, sizeof(float) * n * n) != cudaSuccess || cudaMalloc(&out, sizeof(float) * n * n) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(in, 0, sizeof(float) * n * n);
  dim3 block(TILE, ROWS), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
  for (int rep = 0; rep < 3; ++rep) {
    transpose_naive<<<grid, block>>>(out, in, n);
    transpose_tiled<0><<<grid, block>>>(out, in, n);
    transpose_tiled<1><<<grid, block>>>(out, in, n);
  }
  cudaError_t err = cudaDeviceSynchronize();
  printf("transpose x3: %s\n", cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
