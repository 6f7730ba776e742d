"""cuda-bindings runtime API: count the devices and fail loudly when the runtime reports an error."""
from cuda.bindings import runtime

err, version = runtime.cudaDriverGetVersion()
print("cudaDriverGetVersion:", err.name, version)
err, count = runtime.cudaGetDeviceCount()
if err != runtime.cudaError_t.cudaSuccess:
    _, name = runtime.cudaGetErrorName(err)
    _, text = runtime.cudaGetErrorString(err)
    raise RuntimeError(f"cudaGetDeviceCount failed: {name.decode()} ({int(err)}): {text.decode()}")
print(count, "devices")
