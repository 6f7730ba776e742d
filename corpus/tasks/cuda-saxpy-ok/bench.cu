// Times saxpy_launch with CUDA events after a warm-up; median of 50 runs.
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

cudaError_t saxpy_launch(int n, float a, const float* x, float* y, cudaStream_t stream);

int main() {
  const int n = 1 << 26;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMemset(x, 0x3f, n * sizeof(float));
  cudaMemset(y, 0x3f, n * sizeof(float));
  for (int i = 0; i < 10; ++i) saxpy_launch(n, 2.0f, x, y, 0);
  cudaDeviceSynchronize();
  std::vector<float> ms(50);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (auto& t : ms) {
    cudaEventRecord(start);
    saxpy_launch(n, 2.0f, x, y, 0);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&t, start, stop);
  }
  std::sort(ms.begin(), ms.end());
  printf("saxpy n=%d: median %.4f ms, %.0f GB/s\n", n, ms[25], 3.0 * n * 4 / ms[25] / 1e6);
  return 0;
}
