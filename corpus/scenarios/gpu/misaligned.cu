// A vectorised load (float4) from a pointer offset by one float: 16-byte loads need 16-byte alignment.
#include "_check.h"
__global__ void sum4(const float *x, float *out) {
    const float4 *v = reinterpret_cast<const float4 *>(x + 1);   // bug: x + 1 is only 4-byte aligned
    float4 a = v[threadIdx.x];
    out[threadIdx.x] = a.x + a.y + a.z + a.w;
}
int main() {
    float *x, *out;
    CHECK(cudaMalloc(&x, 4096 * sizeof(float)));
    CHECK(cudaMalloc(&out, 256 * sizeof(float)));
    sum4<<<1, 256>>>(x, out);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("ok\n");
    return 0;
}
