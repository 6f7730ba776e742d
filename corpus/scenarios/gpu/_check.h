// Error checking as most CUDA code writes it: print the runtime's message and exit non-zero.
#pragma once
#include <cstdio>
#include <cstdlib>
#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "CUDA error at %s:%d: %s (%s)\n", __FILE__, __LINE__, cudaGetErrorString(e_), cudaGetErrorName(e_)); \
    exit(1); } } while (0)
