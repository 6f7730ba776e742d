// The kernel reads a variable that was never declared (a typo of `n`).
__global__ void add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < num_elements) c[i] = a[i] + b[i];
}
