"""cuda-bindings driver API: cuInit on a machine with no libcuda (no NVIDIA driver)."""
from cuda.bindings import driver

err, = driver.cuInit(0)
print("cuInit:", err)
