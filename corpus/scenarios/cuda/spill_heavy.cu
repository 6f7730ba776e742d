// A kernel keeping a 64-float accumulator per thread in registers; with a low register cap it spills.
#define N 64
__global__ void poly(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc[N];
    float v = x[i];
#pragma unroll
    for (int k = 0; k < N; ++k) acc[k] = v * (k + 1);
#pragma unroll
    for (int r = 0; r < 8; ++r) {
#pragma unroll
        for (int k = 0; k < N; ++k) acc[k] = acc[k] * acc[(k + r + 1) % N] + x[(i + k) % n];
    }
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < N; ++k) s += acc[k];
    y[i] = s;
}
