// Separate compilation: the kernel calls a __device__ function declared here but defined in no object file.
extern __device__ float activation(float x);
__global__ void apply(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = activation(x[i]);
}
int main() { return 0; }
