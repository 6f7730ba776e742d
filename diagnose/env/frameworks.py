"""Section `frameworks`: torch, triton, jax, cupy builds against this machine and each other."""
from __future__ import annotations

import re

from diagnose.env import builds
from diagnose.env.driver import driver_cuda, torch_works
from diagnose.env.registry import check, hit
from diagnose.env.snap import driver, fw, gpus, live_gpus, packages, ver, vstr


@check("torch-cpu-only", "frameworks", "CPU-only torch on a machine with GPUs", "missing-library")
def _torch_cpu(s):
    t = fw(s, "torch")
    if t and not t.get("cuda") and not t.get("hip") and live_gpus(s):
        ccs = [g["compute_capability"] for g in live_gpus(s) if isinstance(g.get("compute_capability"), str)]
        b = builds.torch_build(ccs, driver_cuda(s), ver(driver(s).get("version")), prefer=t.get("version"))
        fix = f"Install a CUDA build: `{builds.pip_torch(b)}`." if b else \
            "Install a CUDA build of torch for this driver (https://pytorch.org/get-started/locally/)."
        yield hit("error", f"torch {t.get('version')} is a CPU-only build but {len(live_gpus(s))} GPU(s) are present: "
                  "'Torch not compiled with CUDA enabled'", fix, facts={"suggested": b})


@check("torch-sees-no-gpu", "frameworks", "a CUDA torch that finds no usable GPU", "driver-mismatch")
def _torch_nogpu(s):
    t = fw(s, "torch")
    if t.get("cuda") and t.get("imported") is True and t.get("is_available") is False and live_gpus(s):
        yield hit("error", f"torch {t.get('version')} (CUDA {t['cuda']}) reports torch.cuda.is_available() == False "
                  f"although {len(live_gpus(s))} GPU(s) are present", "Check CUDA_VISIBLE_DEVICES and the driver "
                  "version against torch's CUDA (see the driver findings).")


@check("torch-cudnn-missing", "frameworks", "a CUDA torch that cannot load cuDNN", "missing-library")
def _cudnn(s):
    t = fw(s, "torch")
    if t.get("cuda") and t.get("imported") is True and "cudnn" in t and t.get("cudnn") is None:
        yield hit("warning", f"torch {t.get('version')} (CUDA {t['cuda']}) loaded no cuDNN: convolutions fail or "
                  "fall back", f"Install the matching nvidia-cudnn-cu{ver(t['cuda'])[0]} wheel; check LD_LIBRARY_PATH "
                  "for an older libcudnn (see the libraries findings).")


@check("triton-torch-mismatch", "frameworks", "the triton installed is not the one this torch pins")
def _triton_pin(s):
    t, tr = fw(s, "torch"), fw(s, "triton")
    if not t.get("cuda") or not tr.get("version"):
        return                              # CPU builds of torch do not pin triton
    r = builds.torch_release(t.get("version"))
    if not r or "triton" not in r:
        return
    want, have = ver(r["triton"])[:2], ver(tr["version"])[:2]
    if have and want and have != want:
        yield hit("warning", f"torch {t.get('version')} is built against triton {vstr(want)}.x but triton "
                  f"{tr['version']} is installed: torch.compile / inductor kernels may fail to compile or import",
                  f"`pip install \"triton=={vstr(want)}.*\"` (or reinstall torch so pip picks its pinned triton).",
                  facts={"torch_pins": vstr(want), "installed": tr["version"]})


@check("jax-no-cuda-plugin", "frameworks", "jax without a CUDA plugin on a GPU machine")
def _jax_plugin(s):
    j = fw(s, "jax")
    plugins = j.get("plugins") if isinstance(j.get("plugins"), dict) else {}
    if j and live_gpus(s) and not any(str(n).startswith("jax-cuda") for n in plugins):
        have = driver_cuda(s)
        extra = "cuda13" if have and have >= (13, 0) else "cuda12"
        yield hit("warning", f"jax {j.get('version')} has no CUDA plugin: it runs on the CPU although GPUs are "
                  "present", f"`pip install -U \"jax[{extra}]\"` (matched to this driver's CUDA "
                  f"{vstr(have) if have else '?'}).")


@check("jax-plugin-mismatch", "frameworks", "jaxlib and its CUDA plugin differ in version")
def _jax_mismatch(s):
    j = fw(s, "jax")
    plugins = j.get("plugins") if isinstance(j.get("plugins"), dict) else {}
    for n, v in sorted(plugins.items()):
        n = str(n)
        if n.startswith("jax-cuda") and n.endswith("-plugin") and j.get("jaxlib") and ver(v) != ver(j["jaxlib"]):
            yield hit("error", f"{n} {v} does not match jaxlib {j['jaxlib']}: the plugin is not loaded ('jaxlib "
                      "version ... is incompatible with plugin')",
                      f"Reinstall both together: `pip install -U \"jax[cuda{n[8:10]}]=={j['jaxlib']}\"`.")


@check("nvidia-wheels-mixed", "frameworks", "NVIDIA CUDA wheels of two majors installed")
def _mixed(s):
    majors = sorted({m[1] for n in packages(s) for m in [re.search(r"^nvidia-.*-cu(\d\d)$", n)] if m})
    if len(majors) > 1:
        yield hit("warning", f"NVIDIA library wheels for CUDA {' and '.join(majors)} are installed side by side: a "
                  "framework may load libraries of the other major",
                  "Uninstall the wheels of the CUDA major you do not use (`pip list | grep nvidia-`).")


@check("cupy-several", "frameworks", "several cupy packages installed")
def _cupy(s):
    pk = [n for n in packages(s) if n.startswith("cupy")]
    if len(pk) > 1:
        yield hit("error", f"several cupy packages are installed ({', '.join(sorted(pk))}): they overwrite each other",
                  "Uninstall all of them and install exactly one (cupy-cuda12x or cupy-cuda13x, matching the driver).")


@check("pynvml-shim", "frameworks", "the deprecated pynvml package is installed")
def _pynvml(s):
    if "pynvml" in packages(s):
        yield hit("info", f"the PyPI package pynvml {packages(s)['pynvml']} is a deprecated shim over nvidia-ml-py; "
                  "both install pynvml.py and may shadow each other",
                  "`pip uninstall pynvml && pip install nvidia-ml-py`.")


@check("triton-without-gpu", "frameworks", "Triton with no NVIDIA GPU to run on")
def _triton_nogpu(s):
    t = fw(s, "triton")
    if t and not gpus(s):
        yield hit("info", f"triton {t.get('version')} is installed but no GPU is visible: kernels can be compiled "
                  "(to PTX/cubin) but launching them fails with '0 active drivers'",
                  "Run on a GPU machine, or set TRITON_INTERPRET=1 for a (slow, not bit-exact) CPU interpreter.")


_ = torch_works
