// Hopper warpgroup MMA fences (wgmma.*, sm_90a only) in a kernel built for another target.
__global__ void wgmma_prologue(float *out) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    out[threadIdx.x] = 0.f;
}
