"""Gather an environment snapshot: host, packages, toolkits, env vars here; driver probes in children.

Slow or hang-prone work runs concurrently in child processes, each with a timeout: the NVML probe, the
CUDA driver/runtime probe (cuda-bindings), `nvidia-smi`, every compiler's `--version`, and `import torch`
only when the build targets CUDA (its arch list and cuDNN are knowable no other way). Frameworks are
otherwise read from package metadata (dist-info names) and torch/version.py, without importing them.
Every failure is recorded in the snapshot as data; the checks (diagnose/env/) turn it into findings.
"""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

from probes.schema import SCHEMA, empty_snapshot

PROBE_TIMEOUT_S = 20.0
TOOL_TIMEOUT_S = 10.0

ENV_NAMES = ("CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "LD_LIBRARY_PATH", "PATH",
             "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_ORDER", "CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH",
             "CUDA_MODULE_LOADING", "CUDA_DEVICE_MAX_CONNECTIONS", "TORCH_CUDA_ARCH_LIST",
             "TORCH_SHOW_CPP_STACKTRACES", "TORCH_USE_CUDA_DSA", "TORCHINDUCTOR_CACHE_DIR",
             "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING", "XLA_FLAGS", "XLA_PYTHON_CLIENT_PREALLOCATE",
             "XLA_PYTHON_CLIENT_MEM_FRACTION", "JAX_PLATFORMS", "NVIDIA_VISIBLE_DEVICES", "NVCC_APPEND_FLAGS",
             "NVCC_PREPEND_FLAGS", "CC", "CXX", "CUDAHOSTCXX", "CUDACXX", "PJRT_DEVICE", "HSA_OVERRIDE_GFX_VERSION", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX")
ENV_PREFIXES = ("TRITON_", "NCCL_", "XLA_", "JAX_", "TORCH_", "TORCHINDUCTOR_", "PYTORCH_", "CUDA_", "NEURON_",
                "TPU_", "CUBLAS_", "CUDNN_")
SECRET = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIAL|AUTH", re.I)

# Frameworks and CUDA wheels read from package metadata (normalised names).
PACKAGES = ("torch", "triton", "pytorch-triton", "jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt",
            "jax-cuda13-plugin", "jax-cuda13-pjrt", "libtpu", "libtpu-nightly", "cuda-python", "cuda-bindings",
            "cuda-pathfinder", "nvidia-ml-py", "pynvml", "neuronx-cc", "torch-neuronx", "torch-xla", "numpy",
            "tensorflow")
PACKAGE_PREFIXES = ("cupy", "nvidia-cuda-", "nvidia-cudnn-", "nvidia-cublas-", "nvidia-nccl-")

TOOLKIT_PREFIXES = ("/usr/local/cuda", "/opt/cuda", "/usr/lib/nvidia-cuda-toolkit", "/usr/lib/cuda")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# -- packages, without importing them -------------------------------------------------------------

def installed_packages(path: list[str] | None = None) -> dict[str, dict]:
    """{normalised name: {version, location}} from *.dist-info / *.egg-info names on sys.path, first wins.

    Equivalent to importlib.metadata.version() for installed wheels, at a fraction of its import cost.
    """
    found: dict[str, dict] = {}
    for entry in path if path is not None else sys.path:
        try:
            it = os.scandir(entry or ".")
        except OSError:
            continue
        with it:
            for e in it:
                n = e.name
                if not (n.endswith(".dist-info") or n.endswith(".egg-info")):
                    continue
                stem = n.rsplit(".", 1)[0]
                name, _, version = stem.partition("-")
                if not version:
                    continue
                found.setdefault(_norm(name), {"version": version.split("-py")[0], "location": entry})
    return found


def wanted_packages(all_pkgs: dict[str, dict]) -> dict[str, str]:
    return {n: v["version"] for n, v in sorted(all_pkgs.items())
            if n in PACKAGES or n.startswith(PACKAGE_PREFIXES)}


def torch_static(location: str | None) -> dict:
    """torch/version.py read as text: version, the CUDA it targets (None for CPU-only), HIP."""
    out: dict = {}
    if not location:
        return out
    p = os.path.join(location, "torch", "version.py")
    try:
        text = open(p, encoding="utf-8").read()
    except OSError as e:
        out["error"] = f"cannot read {p}: {e.strerror}"
        return out
    for key, var in (("version", "__version__"), ("cuda", "cuda"), ("hip", "hip"), ("git_version", "git_version")):
        m = re.search(rf"^{var}\s*(?::[^=]*)?=\s*(?:'([^']*)'|\"([^\"]*)\"|(None))", text, re.M)
        if m:
            out[key] = m[1] if m[1] is not None else m[2]
    return out


# -- children ----------------------------------------------------------------------------------------

def _spawn_probe(kind: str) -> subprocess.Popen:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys, json; sys.path[:0] = json.loads(sys.argv[1]); "
            "from probes.device import main; sys.exit(main(sys.argv[2:]))")
    paths = [here] + [p for p in sys.path if p and os.path.isdir(p)]
    # -S: skip site processing (.pth files), the paths are given; saves ~40 ms per child.
    return subprocess.Popen([sys.executable, "-S", "-c", code, json.dumps(paths), kind],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True)


def _spawn(argv: list[str]) -> subprocess.Popen | dict:
    try:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)   # a timeout kills the tool and whatever it started
    except OSError as e:
        return {"error": f"{argv[0]}: {e.strerror or e}"}


def _finish(p, deadline: float) -> tuple[str, dict]:
    """(output, status) of a child; on timeout its process is killed and status says so."""
    if isinstance(p, dict):
        return "", p
    try:
        out, err = p.communicate(timeout=max(0.01, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, 9)
        except OSError:
            p.kill()
        p.communicate()
        return "", {"error": f"timed out after {p.args[0] if isinstance(p.args, list) else p.args} "
                             f"did not answer", "timeout": True}
    status = {} if p.returncode == 0 else {"returncode": p.returncode}
    if err:
        status["stderr"] = err.decode(errors="replace")[-2000:]
    return out.decode(errors="replace"), status


def _probe_result(p, deadline: float, kind: str) -> dict:
    out, status = _finish(p, deadline)
    if status.get("timeout"):
        return {"error": f"the {kind} probe did not answer within its timeout (a hung driver?)", "timeout": True}
    try:
        data = json.loads(out)
    except ValueError:
        data = {"error": f"the {kind} probe crashed (exit {status.get('returncode')})",
                "stderr": status.get("stderr", "")[-500:]}
    return data


# -- toolkits ------------------------------------------------------------------------------------------

def toolkit_candidates(env: dict | None = None) -> list[dict]:
    """Every nvcc / ptxas / compute-sanitizer on PATH, under CUDA_HOME/CUDA_PATH and the usual prefixes."""
    env = os.environ if env is None else env
    found: list[dict] = []
    seen: set[str] = set()

    def add(path: str, tool: str, via: str, order: int | None):
        if path in seen or not os.access(path, os.X_OK) or os.path.isdir(path):
            return
        seen.add(path)
        found.append({"tool": tool, "path": path, "realpath": os.path.realpath(path), "via": via, "path_order": order})

    for i, d in enumerate(p for p in env.get("PATH", "").split(os.pathsep) if p):
        for tool in ("nvcc", "ptxas", "compute-sanitizer"):
            add(os.path.join(d, tool), tool, "PATH", i)
    if env.get("CUDACXX"):            # CMake's nvcc
        add(env["CUDACXX"], "nvcc", "CUDACXX", None)
    roots = [env[v] for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT") if env.get(v)]
    for prefix in TOOLKIT_PREFIXES:
        parent, base = os.path.split(prefix)
        try:
            names = sorted(n for n in os.listdir(parent) if n == base or n.startswith(base + "-"))
        except OSError:
            names = []
        roots += [os.path.join(parent, n) for n in names]
    for r in roots:
        for tool in ("nvcc", "ptxas", "compute-sanitizer"):
            add(os.path.join(r, "bin", tool), tool, r, None)
    return found


def _host_compilers(env) -> list[dict]:
    out = []
    for tool in ("gcc", "g++", "clang", "clang++"):
        p = shutil.which(tool, path=env.get("PATH"))
        if p:
            out.append({"tool": tool, "path": p, "realpath": os.path.realpath(p), "via": "PATH", "path_order": None})
    return out


def _version_argv(t: dict) -> list[str]:
    if t["tool"] in ("gcc", "g++"):
        return [t["path"], "-dumpfullversion"]
    return [t["path"], "--version"]


def parse_tool_version(tool: str, text: str) -> str | None:
    if tool in ("nvcc", "ptxas", "compute-sanitizer"):
        m = re.search(r"\bV(\d+\.\d+\.\d+)", text) or re.search(r"release (\d+\.\d+)", text) \
            or re.search(r"Version (\d{4}\.\d+\.\d+)", text)
        return m[1] if m else None
    if tool in ("gcc", "g++"):
        m = re.match(r"\s*(\d+(?:\.\d+)*)", text)
        return m[1] if m else None
    m = re.search(r"version (\d+\.\d+\.\d+)", text)
    return m[1] if m else None


# -- host ---------------------------------------------------------------------------------------------

def cache_dirs(env) -> dict[str, str]:
    home = os.path.expanduser("~")
    user = env.get("USER") or "user"
    return {
        "triton": env.get("TRITON_CACHE_DIR") or os.path.join(home, ".triton", "cache"),
        "torchinductor": env.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join("/tmp", f"torchinductor_{user}"),
        "cuda_jit": env.get("CUDA_CACHE_PATH") or os.path.join(home, ".nv", "ComputeCache"),
        "tmp": env.get("TMPDIR") or "/tmp",
    }


def _disk_free(path: str) -> dict:
    p = path
    while p and not os.path.exists(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    try:
        u = shutil.disk_usage(p)
    except OSError as e:
        return {"path": path, "error": e.strerror}
    return {"path": path, "checked": p, "free_bytes": u.free, "total_bytes": u.total}


def host_info(env) -> dict:
    h: dict = {"os": platform.system(), "kernel": platform.release(), "machine": platform.machine(),
               "python": platform.python_version(), "python_executable": sys.executable}
    try:
        h["glibc"] = os.confstr("CS_GNU_LIBC_VERSION").split()[-1]
    except (ValueError, OSError, AttributeError, IndexError):
        h["glibc"] = None
    try:
        with open("/proc/version") as f:
            h["wsl"] = "microsoft" in f.read().lower()
    except OSError:
        pass
    try:
        with open("/etc/os-release") as f:
            m = re.search(r'^PRETTY_NAME="?([^"\n]*)', f.read(), re.M)
            h["distro"] = m[1] if m else None
    except OSError:
        pass
    cpu = {"logical_cores": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(65536), re.M)
            cpu["model"] = m[1].strip() if m else platform.processor()
    except OSError:
        cpu["model"] = platform.processor()
    h["cpu"] = cpu
    h["memory"] = host_memory()
    h["disk"] = {name: _disk_free(p) for name, p in cache_dirs(env).items()}
    h["euid"] = os.geteuid() if hasattr(os, "geteuid") else None
    h["nvidia_params"] = nvidia_params()
    h["devices"] = device_nodes()
    h["amd_gpus"] = amd_gpus()
    return h


def nvidia_params(path: str = "/proc/driver/nvidia/params") -> dict:
    """The NVIDIA kernel module's parameters that change what users may do (profiling counters)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(65536)
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k.strip() in ("RmProfilingAdminOnly", "EnableGpuFirmware", "ModifyDeviceFiles"):
            out[k.strip()] = v.strip()
    return out


def device_nodes(dev: str = "/dev") -> dict:
    """Accelerator device nodes: nvidia*, neuron*, accel* (TPU), vfio/* (TPU v2/v3), kfd (ROCm)."""
    out: dict = {"nvidia": [], "neuron": [], "accel": [], "vfio": [], "kfd": []}
    try:
        names = sorted(os.listdir(dev))
    except OSError:
        return {}
    for n in names:
        for kind in ("nvidia", "neuron", "accel", "kfd"):
            if n.startswith(kind):
                out[kind].append(os.path.join(dev, n))
    try:
        out["vfio"] = [os.path.join(dev, "vfio", n) for n in sorted(os.listdir(os.path.join(dev, "vfio"))) if n != "vfio"]
    except OSError:
        pass
    return out


def amd_gpus(root: str = "/sys/class/kfd/kfd/topology/nodes") -> list[dict]:
    """AMD GPUs from the kfd topology (no ROCm tools needed): gfx_target_version 90010 -> gfx90a."""
    out = []
    try:
        nodes = sorted(os.listdir(root), key=lambda n: int(n) if n.isdigit() else 0)
    except OSError:
        return out
    for n in nodes:
        try:
            with open(os.path.join(root, n, "properties")) as f:
                props = dict(line.split(None, 1) for line in f.read(65536).splitlines() if " " in line)
        except (OSError, ValueError):
            continue
        v = int(props.get("gfx_target_version", "0").strip() or 0)
        if v:
            major, minor, step = v // 10000, v // 100 % 100, v % 100
            out.append({"node": int(n) if n.isdigit() else n, "gfx": f"gfx{major}{minor:x}{step:x}"})
    return out


# -- Xid events from the kernel log -------------------------------------------------------------------

XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)")
KMSG_MAX_BYTES = 8 << 20


def kernel_log_xids(path: str = "/dev/kmsg") -> dict:
    """`NVRM: Xid` lines in the kernel ring buffer, read without blocking (bounded to 8 MB); an unreadable
    log (dmesg_restrict, a container) is recorded as such: Xid events are then unknown, not absent."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        return {"error": f"{path}: {e.strerror}", "readable": False}
    xids, total = [], 0
    try:
        while total < KMSG_MAX_BYTES:
            try:
                rec = os.read(fd, 8192)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == 32:        # EPIPE: the record was overwritten while reading; go on
                    continue
                break
            if not rec:
                break
            total += len(rec)
            if b"Xid" not in rec:
                continue
            for line in rec.split(b"\n"):      # /dev/kmsg gives one record per read; a file, many lines
                text = line.decode(errors="replace").split(";", 1)[-1].strip()
                m = XID.search(text)
                if m and len(xids) < 1000:
                    xids.append({"pci": m[1].lower(), "code": int(m[2]), "text": text[:300]})
    finally:
        os.close(fd)
    return {"readable": True, "xid": xids, "bytes_read": total}


# -- which CUDA libraries the loader would pick --------------------------------------------------------

LIBS = ("libcudart", "libcublas", "libcublasLt", "libcudnn", "libnccl", "libcuda", "libnvidia-ml")
_SONAME = re.compile(r"^(lib[A-Za-z-]+?)\.so(?:\.(\d+))?((?:\.\d+)*)$")


def _lib_entry(path: str, via: str, order: int | None, wheel_version: str | None = None) -> dict | None:
    name = os.path.basename(path)
    m = _SONAME.match(name)
    if not m or m[1] not in LIBS or not m[2] or m[3]:    # the soname (libcudart.so.12) is what the loader seeks
        return None
    real = os.path.realpath(path)
    rm = _SONAME.match(os.path.basename(real))
    version = None
    if rm and rm[2] and rm[3]:
        version = rm[2] + rm[3]
    elif wheel_version:
        version = wheel_version
    return {"lib": m[1], "soname": f"{m[1]}.so.{m[2]}", "path": path, "realpath": real, "version": version,
            "via": via, "order": order}


def parse_ldconfig(text: str) -> list[tuple[str, str]]:
    """`ldconfig -p` lines `\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12`."""
    out = []
    for line in text.splitlines():
        name, sep, path = line.strip().partition(" => ")
        if sep:
            out.append((name.split(" (", 1)[0], path.strip()))
    return out


def library_inventory(env, ldconfig_text: str, path: list[str] | None = None,
                      wheel_versions: dict | None = None) -> dict:
    """Per library, every file the loader could use, in its search order: LD_LIBRARY_PATH, the framework
    wheels' nvidia/*/lib (torch's RUNPATH), then the ldconfig cache."""
    found: dict[str, list[dict]] = {}

    def add(e):
        if e and not any(x["path"] == e["path"] for x in found.setdefault(e["lib"], [])):
            found[e["lib"]].append(e)

    for i, d in enumerate(p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            if n.startswith(LIBS):
                add(_lib_entry(os.path.join(d, n), "LD_LIBRARY_PATH", i))
    for entry in path if path is not None else sys.path:
        base = os.path.join(entry or ".", "nvidia")
        try:
            pkgs = sorted(os.listdir(base))
        except OSError:
            continue
        for pkg in pkgs:
            lib = os.path.join(base, pkg, "lib")
            try:
                names = sorted(os.listdir(lib))
            except OSError:
                continue
            for n in names:
                if n.startswith(LIBS):
                    add(_lib_entry(os.path.join(lib, n), f"wheel:{pkg}", None, (wheel_versions or {}).get(pkg)))
    for name, p in parse_ldconfig(ldconfig_text):
        if name.startswith(LIBS):
            add(_lib_entry(p, "ldconfig", None))
    return {lib: {"candidates": cs} for lib, cs in sorted(found.items())}


def host_memory() -> dict:
    """Total and available memory: /proc/meminfo directly on Linux (what psutil reads, without its 50 ms
    import), psutil elsewhere."""
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        kib = lambda k: int(info[k].split()[0]) * 1024  # noqa: E731
        return {"total_bytes": kib("MemTotal"), "available_bytes": kib("MemAvailable")}
    except (OSError, KeyError, ValueError):
        pass
    try:
        import psutil

        vm = psutil.virtual_memory()
        return {"total_bytes": vm.total, "available_bytes": vm.available}
    except Exception as e:  # psutil missing or unsupported platform
        return {"error": str(e)}


def env_vars(env) -> dict[str, str]:
    return {k: v for k, v in sorted(env.items())
            if (k in ENV_NAMES or k.startswith(ENV_PREFIXES)) and not SECRET.search(k)}


def _loadable(lib: str) -> tuple[bool, str]:
    import ctypes

    try:
        ctypes.CDLL(lib)
        return True, ""
    except OSError as e:
        return False, str(e)


# -- the whole snapshot -----------------------------------------------------------------------------------

def snapshot(full: bool = False, import_frameworks: str = "auto", timeout: float = PROBE_TIMEOUT_S,
             while_waiting=None, env: dict | None = None) -> dict:
    """Gather the snapshot. full: always run the cuda-bindings probe (else skipped when libcuda.so.1 cannot
    even be loaded: the same answer for 0.2 s less). import_frameworks: auto | always | never."""
    env = dict(os.environ if env is None else env)
    t0 = time.monotonic()
    deadline = t0 + timeout
    snap = empty_snapshot()
    snap["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    probes: dict = {}

    # pynvml and cuda-bindings dlopen libnvidia-ml.so.1 / libcuda.so.1 first; when that fails here
    # (no driver) their answer is known, and the ~0.1-0.2 s of starting them is skipped unless --full.
    children = {}
    nvml_ok, nvml_err = (True, "") if full else _loadable("libnvidia-ml.so.1")
    if nvml_ok:
        children["nvml"] = _spawn_probe("nvml")
    libcuda_ok, libcuda_err = (True, "") if full else _loadable("libcuda.so.1")
    if libcuda_ok:
        children["cuda"] = _spawn_probe("cuda")
    smi = shutil.which("nvidia-smi", path=env.get("PATH"))
    smi_proc = _spawn([smi, "--query-gpu=index,name,driver_version,memory.total",
                       "--format=csv,noheader"]) if smi else None

    ldconfig = shutil.which("ldconfig", path=env.get("PATH", "") + ":/sbin:/usr/sbin") or "/sbin/ldconfig"
    ld_proc = _spawn([ldconfig, "-p"])
    all_pkgs = installed_packages()
    snap["packages"] = wanted_packages(all_pkgs)
    torch_meta = all_pkgs.get("torch")
    torch = dict(torch_static(torch_meta["location"]) if torch_meta else {})
    if torch_meta:
        torch.setdefault("version", torch_meta["version"])
    if torch_meta and (import_frameworks == "always" or (import_frameworks == "auto" and torch.get("cuda"))):
        children["torch"] = _spawn_probe("torch")

    tools = toolkit_candidates(env) + _host_compilers(env)
    triton = _triton_static(all_pkgs.get("triton") or all_pkgs.get("pytorch-triton"), env)
    if triton.get("ptxas"):
        tools.append({"tool": "ptxas", "path": triton["ptxas"], "realpath": os.path.realpath(triton["ptxas"]),
                      "via": "triton", "path_order": None})
    # one `--version` per real file: /usr/local/cuda and /usr/local/cuda-13.0 are usually the same toolkit
    runs: dict[str, object] = {}
    for t in tools:
        if t["realpath"] not in runs:
            runs[t["realpath"]] = _spawn(_version_argv(t))

    snap["host"] = host_info(env)
    snap["env"] = env_vars(env)
    probes["kmsg"] = kernel_log_xids()
    if while_waiting:
        while_waiting()

    tool_deadline = min(deadline, time.monotonic() + TOOL_TIMEOUT_S)
    answers = {rp: _finish(p, tool_deadline) for rp, p in runs.items()}
    for t in tools:
        out, status = answers[t["realpath"]]
        t["version"] = parse_tool_version(t["tool"], out)
        if t["version"] is None:
            t["error"] = status.get("error") or (out.strip().splitlines() or ["no version in its output"])[-1][:300]
        snap["toolkits"].append(t)
    if triton.get("ptxas"):
        triton["ptxas_version"] = next((t.get("version") for t in snap["toolkits"] if t["via"] == "triton"), None)

    ld_out, ld_status = _finish(ld_proc, min(deadline, time.monotonic() + TOOL_TIMEOUT_S))
    snap["libraries"] = library_inventory(env, ld_out, wheel_versions={
        n[len("nvidia-"):].rsplit("-cu", 1)[0].replace("-", "_"): v["version"] for n, v in all_pkgs.items()
        if n.startswith("nvidia-")})
    if ld_status.get("error"):
        probes["ldconfig"] = ld_status
    results = {k: _probe_result(p, deadline, k) for k, p in children.items()}
    nvml = results.get("nvml") or {"skipped": True, "gpus": [], "stage": "dlopen libnvidia-ml.so.1",
                                    "error": f"libnvidia-ml.so.1 cannot be loaded ({nvml_err}); pynvml not asked",
                                    "error_type": "LibraryNotLoadable"}
    cuda = results.get("cuda") or {"skipped": True, "cuinit": {
        "error": f"libcuda.so.1 cannot be loaded ({libcuda_err}); cuda-bindings not asked", "error_type": "OSError"}}
    probes["nvml"] = {k: v for k, v in nvml.items() if k not in ("gpus",)}
    probes["cuda"] = {k: v for k, v in cuda.items() if k != "devices"}
    if smi_proc is not None:
        out, status = _finish(smi_proc, min(deadline, time.monotonic() + TOOL_TIMEOUT_S))
        probes["nvidia_smi"] = {"path": smi, "output": out[-2000:], **status}
    else:
        probes["nvidia_smi"] = {"error": "nvidia-smi not on PATH"}

    snap["driver"] = _driver(nvml, cuda)
    snap["cuda"] = {"driver_api_version": cuda.get("driver_api_version"),
                    "runtime_linked": cuda.get("runtime", {}).get("runtime_version"),
                    "device_count": cuda.get("runtime", {}).get("device_count")}
    snap["gpus"] = merge_gpus(nvml.get("gpus") or [], cuda.get("devices") or [])

    if "torch" in results:
        tr = results["torch"]
        probes["torch_import"] = {k: v for k, v in tr.items() if k.endswith("error") or k in ("stage",)}
        torch.update({k: v for k, v in tr.items() if k in ("version", "cuda", "hip", "arch_list", "cudnn",
                                                             "is_available", "device_count", "devices")})
        torch["imported"] = True
    elif torch_meta:
        torch["imported"] = False
        if not torch.get("cuda"):
            torch["arch_list"] = []       # a CPU-only build carries no CUDA arch
    snap["frameworks"] = _frameworks(snap["packages"], torch if torch_meta else None, triton)
    probes["elapsed_s"] = round(time.monotonic() - t0, 3)
    snap["probes"] = probes
    return snap


def _triton_static(meta: dict | None, env) -> dict:
    if not meta:
        return {}
    out = {"version": meta["version"]}
    ptxas = env.get("TRITON_PTXAS_PATH") or os.path.join(meta["location"], "triton", "backends", "nvidia", "bin", "ptxas")
    if os.access(ptxas, os.X_OK):
        out["ptxas"] = ptxas
    return out


def _driver(nvml: dict, cuda: dict) -> dict:
    d: dict = {}
    if nvml.get("driver_version"):
        d["version"] = nvml["driver_version"]
    if nvml.get("cuda_driver_version"):
        d["cuda_version"] = nvml["cuda_driver_version"]
    elif cuda.get("driver_api_version"):
        d["cuda_version"] = cuda["driver_api_version"]
    if "error" in nvml and not d.get("version"):
        d["error"] = nvml["error"]
        d["error_type"] = nvml.get("error_type")
    return d


def merge_gpus(nvml_gpus: list[dict], cuda_devs: list[dict]) -> list[dict]:
    """NVML's view of each GPU with the CUDA driver's attributes added (matched by PCI bus id, else order)."""
    by_bus = {d.get("pci_bus_id"): d for d in cuda_devs if d.get("pci_bus_id")}
    gpus = []
    for i, g in enumerate(nvml_gpus):
        g = dict(g)
        bus = g.get("pci_bus_id", "")
        c = next((d for b, d in by_bus.items() if bus and b and bus.endswith(b[-7:])), None)
        if c is None and i < len(cuda_devs) and not by_bus:
            c = cuda_devs[i]
        if c:
            g["cuda_index"] = c.get("index")
            for k, v in c.items():
                if k not in ("index",):
                    g.setdefault(k, v)
        gpus.append(g)
    if not nvml_gpus:          # NVML unavailable but the CUDA driver answered
        gpus = [dict(d) for d in cuda_devs]
    return gpus


def _frameworks(pkgs: dict, torch: dict | None, triton: dict) -> dict:
    fw: dict = {}
    if torch is not None:
        fw["torch"] = torch
    if triton:
        fw["triton"] = triton
    if "jax" in pkgs or "jaxlib" in pkgs:
        fw["jax"] = {"version": pkgs.get("jax"), "jaxlib": pkgs.get("jaxlib"),
                     "plugins": {n: v for n, v in pkgs.items() if n.startswith("jax-cuda") or n.startswith("libtpu")}}
    for name in ("cuda-bindings", "cuda-python", "neuronx-cc", "torch-neuronx", "torch-xla", "tensorflow"):
        if name in pkgs:
            fw[name] = {"version": pkgs[name]}
    cupy = {n: v for n, v in pkgs.items() if n.startswith("cupy")}
    if cupy:
        fw["cupy"] = {"packages": cupy}
    return fw
