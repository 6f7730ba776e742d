"""Section `accelerators`: TPU (libtpu), AWS Neuron, torch-xla and ROCm builds against this machine."""
from __future__ import annotations

from diagnose.env.registry import check, hit
from diagnose.env.snap import env, fw, host, live_gpus, packages, sub, ver, vstr
from diagnose.env.tables import table


def _devices(s, kind: str) -> list[str]:
    d = sub(host(s), "devices").get(kind)
    return [x for x in d if isinstance(x, str)] if isinstance(d, list) else []


def _known_devices(s) -> bool:
    return isinstance(sub(host(s), "devices"), dict) and bool(sub(host(s), "devices"))


@check("libtpu-on-gpu-host", "accelerators", "libtpu installed on a machine with no TPU")
def _libtpu(s):
    pk = packages(s)
    tpu = [n for n in table("jax")["tpu"]["packages"] if n in pk]
    if not tpu or not _known_devices(s) or _devices(s, "accel") or _devices(s, "vfio"):
        return
    plat = env(s).get("JAX_PLATFORMS")
    if plat and "tpu" not in plat:
        return
    sev = "warning" if live_gpus(s) else "info"
    yield hit(sev, f"{', '.join(f'{n} {pk[n]}' for n in tpu)} is installed but this machine has no TPU (no /dev/accel* "
              "or /dev/vfio): JAX initialises the TPU backend first, waits for it and logs 'Unable to initialize "
              "backend tpu'" + ("; on this GPU host that delays or confuses device selection" if live_gpus(s) else ""),
              "`pip uninstall " + " ".join(tpu) + "`, or `export JAX_PLATFORMS=" +
              ("cuda" if live_gpus(s) else "cpu") + "`.")


def _neuron_release(field: str, value) -> str | None:
    v = ver(value)
    if not v:
        return None
    for r in table("neuron")["release"]:
        if ver(r[field]) == v[:2]:
            return r["neuron"]
    return None


@check("neuron-mismatch", "accelerators", "Neuron compiler, framework and torch from different releases")
def _neuron(s):
    pk = packages(s)
    cc, tn = pk.get("neuronx-cc"), pk.get("torch-neuronx")
    if tn:
        tv = ver(tn)
        torch_v = ver(pk.get("torch") or fw(s, "torch").get("version"))
        if len(tv) >= 5 and torch_v and torch_v[:3] != tv[:3]:
            yield hit("error", f"torch-neuronx {tn} is built for torch {vstr(tv[:3])} but torch {vstr(torch_v)} is "
                      "installed: `import torch_neuronx` fails or crashes", f"`pip install torch=={vstr(tv[:3])}` "
                      "(or the torch-neuronx of your torch) from the Neuron repository "
                      "(--extra-index-url https://pip.repos.neuron.amazonaws.com).")
    if cc and tn:
        rc = _neuron_release("neuronx_cc", cc)
        tv = ver(tn)
        rt = _neuron_release("torch_neuronx", vstr(tv[3:5])) if len(tv) >= 5 else None
        if rc and rt and rc != rt:
            yield hit("warning", f"neuronx-cc {cc} ships with Neuron {rc} but torch-neuronx {tn} with Neuron {rt}: "
                      "compiled graphs may not load on the runtime", f"Install one Neuron release's packages "
                      f"together (e.g. Neuron {max(rc, rt, key=ver)}: see its release-content page).")


@check("neuron-without-device", "accelerators", "Neuron packages on a machine without a Neuron device")
def _neuron_dev(s):
    pk = packages(s)
    have = [n for n in ("neuronx-cc", "torch-neuronx") if n in pk]
    if have and _known_devices(s) and not _devices(s, "neuron"):
        yield hit("info", f"{', '.join(have)} installed but no /dev/neuron* device: code can be compiled here, it "
                  "runs only on Trn/Inf instances", "Run on a Trainium/Inferentia instance to execute Neuron code.")


@check("torch-xla-mismatch", "accelerators", "torch-xla built for another torch")
def _xla(s):
    pk = packages(s)
    x = pk.get("torch-xla")
    t = pk.get("torch") or fw(s, "torch").get("version")
    if x and t and ver(x)[:2] != ver(t)[:2]:
        yield hit("error", f"torch-xla {x} does not match torch {t}: `import torch_xla` fails with undefined symbols",
                  f"`pip install torch=={vstr(ver(x)[:2])}.*` or the torch-xla release of torch {vstr(ver(t)[:2])}.")
    elif x and live_gpus(s) and not env(s).get("PJRT_DEVICE") and not _devices(s, "accel"):
        yield hit("info", f"torch-xla {x} on a GPU host without PJRT_DEVICE: torch_xla picks a device at import",
                  "`export PJRT_DEVICE=CUDA` (or TPU/CPU) to say which.")


@check("rocm-arch", "accelerators", "ROCm torch against the AMD GPUs present", "arch-mismatch")
def _rocm(s):
    t = fw(s, "torch")
    if not t.get("hip"):
        return
    amd = [g for g in (host(s).get("amd_gpus") if isinstance(host(s).get("amd_gpus"), list) else [])
           if isinstance(g, dict) and isinstance(g.get("gfx"), str)]
    arch = [a for a in (t.get("arch_list") if isinstance(t.get("arch_list"), list) else []) if isinstance(a, str)]
    if not amd and live_gpus(s):
        yield hit("error", f"torch {t.get('version')} is a ROCm (HIP {t['hip']}) build but the GPUs here are NVIDIA",
                  "Install a CUDA build of torch (https://pytorch.org/get-started/locally/).", family="missing-library")
        return
    for g in amd:
        base = g["gfx"].split(":")[0]
        if arch and not any(a.split(":")[0] == base for a in arch):
            yield hit("error", f"AMD GPU {g['gfx']} is not in torch {t.get('version')}'s ROCm arch list "
                      f"({' '.join(arch)}): 'HIP error: invalid device function'",
                      "Install a ROCm torch built for this gfx target, or (for a close sibling only) set "
                      "HSA_OVERRIDE_GFX_VERSION.")
