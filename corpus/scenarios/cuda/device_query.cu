// The first lines of the CUDA deviceQuery sample: count the devices before anything else.
#include <cstdio>
#include <cstdlib>
int main() {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        printf("cudaGetDeviceCount returned %d\n-> %s\n", (int)err, cudaGetErrorString(err));
        printf("Result = FAIL\n");
        exit(EXIT_FAILURE);
    }
    printf("Detected %d CUDA Capable device(s)\n", count);
    return 0;
}
