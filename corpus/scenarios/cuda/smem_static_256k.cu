// A tiled kernel with a 256 KiB static shared buffer: static shared memory is capped at 48 KiB.
#define TILE 65536
__global__ void stage(const float *in, float *out, int n) {
    __shared__ float buf[TILE];
    for (int i = threadIdx.x; i < TILE && i < n; i += blockDim.x) buf[i] = in[i];
    __syncthreads();
    for (int i = threadIdx.x; i < TILE && i < n; i += blockDim.x) out[i] = buf[TILE - 1 - i];
}
