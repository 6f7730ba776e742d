#include <cuda_runtime.h>

__global__ void block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float partial[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  partial[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      partial[tid] += partial[tid + s];
      __syncthreads();
    }
  }
  if (tid == 0) {
    atomicAdd(out, partial[0]);
  }
}

cudaError_t block_sum_launch(const float* in, float* out, int n, cudaStream_t stream) {
  block_sum<<<(n + 255) / 256, 256, 0, stream>>>(in, out, n);
  return cudaGetLastError();
}
