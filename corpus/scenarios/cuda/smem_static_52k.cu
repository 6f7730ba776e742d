// Two static tiles of a GEMM (A: 64x104 floats, B: 104x64 floats) add up to 52 KiB: just over the 48 KiB static limit.
#define BM 64
#define BK 104
#define BN 64
__global__ void gemm_tile(const float *A, const float *B, float *C, int K) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    int r = threadIdx.y, c = threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int k = c; k < BK; k += blockDim.x) As[r][k] = A[r * K + k0 + k];
        for (int k = r; k < BK; k += blockDim.y) Bs[k][c] = B[(k0 + k) * BN + c];
        __syncthreads();
        for (int k = 0; k < BK; ++k) acc += As[r][k] * Bs[k][c];
        __syncthreads();
    }
    C[r * BN + c] = acc;
}
