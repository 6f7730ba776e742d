"""Runtime compilation with NVRTC through cuda-bindings (a JIT kernel library's first step)."""
from cuda.bindings import nvrtc

src = b'extern "C" __global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }'
err, prog = nvrtc.nvrtcCreateProgram(src, b"scale.cu", 0, [], [])
print("nvrtcCreateProgram:", err)
err, = nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=compute_90"])
print("nvrtcCompileProgram:", err)
