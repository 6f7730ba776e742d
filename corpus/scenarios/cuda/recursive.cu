// A recursive device function: it builds, but ptxas cannot size the stack statically.
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__global__ void fibs(int *out) { out[threadIdx.x] = fib(threadIdx.x); }
