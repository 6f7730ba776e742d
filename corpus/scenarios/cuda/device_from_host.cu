// Host code calls a __device__ function directly instead of launching a kernel.
__device__ float relu(float x) { return x > 0.f ? x : 0.f; }

int main() {
    float y = relu(-1.0f);
    return y != 0.f;
}
