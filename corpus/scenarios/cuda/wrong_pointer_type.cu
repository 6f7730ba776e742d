// The launcher passes an int* where the kernel expects const float*.
__global__ void sum(const float *x, float *out, int n) {
    float acc = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
    atomicAdd(out, acc);
}

void launch(int *x, float *out, int n) {
    sum<<<1, 256>>>(x, out, n);
}
