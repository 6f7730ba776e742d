"""A GPU monitor that starts NVML to read memory use (nvidia-ml-py) on a machine with no NVIDIA driver."""
import pynvml

pynvml.nvmlInit()
handle = pynvml.nvmlDeviceGetHandleByIndex(0)
print(pynvml.nvmlDeviceGetMemoryInfo(handle))
