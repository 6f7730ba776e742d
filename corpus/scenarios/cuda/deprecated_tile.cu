// Builds and links: the only diagnostics are host-compiler warnings about a deprecated type.
struct __attribute__((deprecated("use tile_v2"))) tile_v1 { int rows, cols; };

__global__ void zero(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 0.f;
}

int tile_elems() { tile_v1 t{16, 16}; return t.rows * t.cols; }

int main() { return tile_elems() == 256 ? 0 : 1; }
