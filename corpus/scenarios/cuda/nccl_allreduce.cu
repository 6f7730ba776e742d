// An all-reduce over every local GPU with NCCL: needs libnccl at link time.
#include <cstdio>
#include <nccl.h>
int main() {
    int ndev = 0;
    cudaGetDeviceCount(&ndev);
    ncclComm_t comms[8];
    int devs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    ncclResult_t r = ncclCommInitAll(comms, ndev, devs);
    printf("ncclCommInitAll: %s\n", ncclGetErrorString(r));
    return r != ncclSuccess;
}
