// A warp-specialised producer/consumer kernel that rebalances registers with setmaxnreg (sm_90a only).
__global__ void __launch_bounds__(384) warp_specialized(float *out) {
    int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        out[threadIdx.x] = 1.0f;
    }
}
