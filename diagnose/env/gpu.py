"""Section `gpu`: each GPU's architecture against the builds, its health, its partitioning and links."""
from __future__ import annotations

from diagnose.env import builds
from diagnose.env.arch import arch_covers, runs_on, torch_arch_list
from diagnose.env.driver import driver_cuda
from diagnose.env.registry import check, hit
from diagnose.env.snap import (cc_tuple, cuda, driver, env, fw, gib, gpus, host, live_gpus, main_nvcc, num,
                               probe, sub, ver, vstr)

_ = runs_on
from diagnose.env.tables import table


def _cc(g):
    return g.get("compute_capability") if isinstance(g.get("compute_capability"), str) else None


@check("none-visible", "gpu", "the driver answers but lists no GPU", "missing-library")
def _no_gpu(s):
    p = probe(s, "nvml")
    if driver(s).get("version") and not gpus(s) and not p.get("error"):
        yield hit("error", f"driver {driver(s)['version']} is loaded but reports 0 GPUs",
                  "Check `nvidia-smi -L`; in a container pass the devices (`--gpus all`); check NVIDIA_VISIBLE_DEVICES.")


@check("lost", "gpu", "a GPU NVML lists cannot be used (lost, fallen off the bus, unknown error)",
       "hardware-fault", origin="hardware", folds=("env.gpu.count-mismatch",))
def _lost(s):
    for g in gpus(s):
        err = g.get("error")
        if isinstance(err, str) and err:
            yield hit("error", f"GPU {g.get('index', '?')} does not answer NVML: {err} (the GPU is lost or failed; "
                      "work on it fails with 'unspecified launch failure' or 'GPU has fallen off the bus')",
                      "Drain the node; read `dmesg | grep -i xid` (Xid 79 = fallen off the bus); reset the GPU "
                      "(`nvidia-smi -r -i N`) or reboot; if it recurs, RMA it.",
                      facts={"gpu_index": g.get("index")}, evidence=[f"gpus[{g.get('index')}].error = {err}"])


def visible_expected(s) -> int | None:
    """How many devices CUDA should see: every GPU (MIG: every instance) unless CUDA_VISIBLE_DEVICES narrows it."""
    n = len(gpus(s))
    v = env(s).get("CUDA_VISIBLE_DEVICES")
    if v is None:
        return n
    entries = [e.strip() for e in v.split(",")]
    if v.strip() in ("", "-1", "NoDevFiles", "none"):
        return 0
    uuids = [str(g.get("uuid", "")) for g in gpus(s)]
    count = 0
    for e in entries:                       # CUDA stops at the first entry it cannot resolve
        if e.isdigit() and int(e) < n:
            count += 1
        elif e.startswith(("GPU-", "MIG-")) and any(u.startswith(e) for u in uuids):
            count += 1
        elif e.startswith("MIG-"):
            return None                     # a MIG instance uuid: NVML's parent list does not say
        else:
            break
    return count


@check("count-mismatch", "gpu", "NVML, CUDA, torch and nvidia-smi count different GPUs", "hardware-fault",
       origin="hardware")
def _counts(s):
    nvml = num(probe(s, "nvml").get("device_count"))
    listed = len(gpus(s))
    counts = {}
    if nvml is not None:
        counts["NVML"] = nvml
    c = num(cuda(s).get("device_count"))
    if c is not None:
        counts["CUDA runtime"] = c
    t = fw(s, "torch")
    if t.get("imported") is True and t.get("is_available") is True and num(t.get("device_count")) is not None \
            and t.get("cuda"):                  # a torch that cannot initialise CUDA counts 0: not a GPU count
        counts["torch"] = t["device_count"]
    smi = probe(s, "nvidia_smi").get("output")
    if isinstance(smi, str) and smi.strip() and not probe(s, "nvidia_smi").get("returncode"):
        counts["nvidia-smi"] = len([ln for ln in smi.splitlines() if ln.strip()])
    if any(g.get("mig", {}).get("enabled") for g in gpus(s) if isinstance(g.get("mig"), dict)):
        return                              # CUDA counts MIG instances, NVML counts parents
    whole = {k: v for k, v in counts.items() if k in ("NVML", "nvidia-smi")}
    if nvml is not None and listed and nvml != listed:
        whole["NVML handles"] = listed
    exp = visible_expected(s)
    seen = {k: v for k, v in counts.items() if k in ("CUDA runtime", "torch")}
    bad = len(set(whole.values())) > 1 or (exp is not None and seen and any(v != exp for v in seen.values())
                                          and not any(g.get("error") for g in gpus(s)))
    if any(g.get("error") for g in gpus(s)) and seen and nvml is not None and any(v < nvml for v in seen.values()):
        bad = True
    if bad:
        what = ", ".join(f"{k} {v}" for k, v in {**whole, **seen}.items())
        cvd = env(s).get("CUDA_VISIBLE_DEVICES")
        yield hit("error", f"the GPU counts disagree: {what}"
                  + (f" (CUDA_VISIBLE_DEVICES={cvd!r} allows {exp})" if cvd is not None else "")
                  + ": a GPU failed to initialise or was lost after boot",
                  "Compare `nvidia-smi -L` with `python -c 'import torch; print(torch.cuda.device_count())'`; read "
                  "`dmesg | grep -i xid`; reset or reboot, and drain the node if a GPU stays missing.",
                  facts={"counts": {**whole, **seen}, "expected_visible": exp})


@check("xid", "gpu", "Xid errors in the kernel log", "hardware-fault", origin="hardware")
def _xid(s):
    k = probe(s, "kmsg")
    events = [e for e in (k.get("xid") if isinstance(k.get("xid"), list) else []) if isinstance(e, dict)]
    known = {x["code"]: x for x in table("xid")["xid"]}
    by_code: dict[int, list[dict]] = {}
    for e in events:
        code = e.get("code")
        if isinstance(code, int) and not isinstance(code, bool):
            by_code.setdefault(code, []).append(e)
    for code, es in sorted(by_code.items()):
        x = known.get(code, {"what": "see NVIDIA's Xid catalog", "origin": "hardware", "severity": "warning",
                             "action": "Look the code up in https://docs.nvidia.com/deploy/xid-errors/."})
        devs = sorted({str(e.get("pci", "?")) for e in es})
        yield hit(x["severity"], f"Xid {code} ({x['what']}) logged {len(es)} time(s) since boot on "
                  f"{', '.join(devs)}", x["action"], origin=x["origin"],
                  family="hardware-fault" if x["origin"] == "hardware" else None,
                  facts={"xid": code, "devices": devs}, evidence=[str(es[-1].get("text", ""))[:200]])


@check("fabric-not-ready", "gpu", "NVSwitch fabric (fabric manager) not ready", "hardware-fault")
def _fabric(s):
    for g in live_gpus(s):
        f = sub(g, "fabric")
        state = f.get("state")
        status = f.get("status")
        if state in (None, "not_supported"):
            continue
        if state != "completed" or (status not in (None, "success")):
            yield hit("error", f"the NVSwitch fabric is not ready (state {state}, status {status}): CUDA "
                      "initialisation fails with 'system not yet initialized' (error 802)",
                      "Start the fabric manager matching the driver (`systemctl start nvidia-fabricmanager`; its "
                      "version must equal the driver's) and check `journalctl -u nvidia-fabricmanager`.", gpu=g)


@check("nvlink-down", "gpu", "some NVLink links of a GPU are down")
def _nvlink(s):
    for g in live_gpus(s):
        n = sub(g, "nvlink")
        up, down = num(n.get("active")), n.get("inactive")
        if up and isinstance(down, list) and down:
            yield hit("warning", f"{len(down)} NVLink link(s) down, {up} up: peer traffic falls back to slower paths "
                      "and NCCL may hang or be slow", "Check `nvidia-smi nvlink -s` and `-e` (error counters); a "
                      "reset or reseat may be needed.", gpu=g, origin="hardware")


@check("arch-not-in-torch", "gpu", "the device's compute capability is not in torch's arch list", "arch-mismatch")
def _arch_torch(s):
    t = fw(s, "torch")
    arch = [a for a in (t.get("arch_list") if isinstance(t.get("arch_list"), list) else []) if isinstance(a, str)]
    if not t.get("cuda") or not arch:
        return
    ccs = [_cc(g) for g in live_gpus(s) if _cc(g)]
    b = builds.torch_build(ccs, driver_cuda(s), ver(driver(s).get("version")), prefer=t.get("version"))
    fix_build = (f"Install a build that covers it: `{builds.pip_torch(b)}`" if b else
                 "No listed torch wheel covers this GPU with this driver: build from source with "
                 "TORCH_CUDA_ARCH_LIST set to its CC (or upgrade the driver)")
    for g in live_gpus(s):
        cc = _cc(g)
        got = arch_covers(arch, cc) if cc else "sass"
        if got == "":
            yield hit("error", f"not covered by torch {t.get('version')} (built for {' '.join(arch)}): expect 'no "
                      "kernel image is available for execution on the device'", fix_build + ".", gpu=g,
                      facts={"torch_arch_list": arch, "suggested": b})
        elif got == "ptx":
            yield hit("warning", f"runs torch {t.get('version')} only through PTX JIT (arch list {' '.join(arch)}): "
                      "the first launch of each kernel compiles for minutes and runs slower",
                      fix_build + "; keep CUDA_CACHE_PATH on a persistent disk.", gpu=g)


@check("triton-cannot-target", "gpu", "Triton cannot compile for this GPU", "arch-mismatch")
def _triton_cc(s):
    t = fw(s, "triton")
    if not t:
        return
    lo = cc_tuple(table("arch")["triton_min_cc"])
    pv = ver(t.get("ptxas_version"))
    for g in live_gpus(s):
        c = cc_tuple(_cc(g))
        if c and c < lo:
            yield hit("error", f"Triton {t.get('version')} supports CC >= {vstr(lo)}: kernels cannot be compiled "
                      "for this GPU", "Run Triton kernels on a Volta (7.0) or newer GPU.", gpu=g)
        elif c and pv and pv[0] >= 13 and c < (7, 5):
            yield hit("error", f"Triton {t.get('version')} assembles with its bundled ptxas {t['ptxas_version']} "
                      "(CUDA 13), which starts at sm_75: every Triton kernel fails to compile for this GPU "
                      "('Unsupported gpu architecture')",
                      "Point TRITON_PTXAS_PATH at a CUDA 12.x ptxas (e.g. /usr/local/cuda-12.9/bin/ptxas), or use a "
                      "Triton whose bundled ptxas is CUDA 12.x.", gpu=g)


@check("no-bf16", "gpu", "pre-Ampere GPU: no native bf16", "dtype-mismatch")
def _bf16(s):
    lo = cc_tuple(table("arch")["bf16_min_cc"])
    users = [n for n in ("torch", "jax", "triton") if fw(s, n)]
    if not users:
        return
    for g in live_gpus(s):
        c = cc_tuple(_cc(g))
        if c and c < lo:
            sev = "warning" if fw(s, "triton") else "info"
            yield hit(sev, f"CC {vstr(c)} has no bf16 arithmetic: torch.cuda.is_bf16_supported() is False, bf16 "
                      "matmuls are emulated (slow) or rejected, and Triton kernels using bf16 fail to compile "
                      "(frameworks here: " + ", ".join(users) + ")",
                      "Use float16 (with loss scaling) or float32 on this GPU, or run bf16 work on CC >= 8.0.", gpu=g)


@check("nvcc-cannot-target", "gpu", "the nvcc in use cannot target the device's architecture", "arch-mismatch")
def _nvcc_target(s):
    t = main_nvcc(s)
    if not t:
        return
    v = ver(t["version"])[:2]
    rows = [r for r in table("nvcc")["arch_range"] if v >= ver(r["nvcc"])]
    if not rows:
        return
    lo, hi = cc_tuple(rows[-1]["lowest"]), cc_tuple(rows[-1]["highest"])
    for g in live_gpus(s):
        c = cc_tuple(_cc(g))
        if c and c < lo:
            yield hit("error", f"nvcc {t['version']} ({t['path']}) starts at sm_{lo[0]}{lo[1]}: expect 'Unsupported "
                      "gpu architecture'", f"Build for this GPU with a CUDA 12.x toolkit (12.9 is the last to target "
                      f"sm_{c[0]}{c[1]}).", gpu=g)
        elif c and c > hi:
            yield hit("error", f"nvcc {t['version']} ({t['path']}) knows architectures up to sm_{hi[0]}{hi[1]}",
                      "Install a newer CUDA toolkit (12.8+ for Blackwell) and put it first.", gpu=g)


def suffix_is_the_cause(archs: list[str], cc: str) -> bool:
    """The list cannot run on `cc` only because of its arch/family-specific suffixes (sm_100a on a 10.3 GPU)."""
    return arch_covers(archs, cc) == "" and any(a[-1] in "af" for a in archs) and \
        arch_covers([a[:-1] if a[-1] in "af" else a for a in archs], cc) != ""


@check("arch-specific-mismatch", "gpu", "TORCH_CUDA_ARCH_LIST has only sm_XXa / sm_XXf code for another CC",
       "arch-mismatch")
def _arch_specific(s):
    v = env(s).get("TORCH_CUDA_ARCH_LIST", "")
    archs = torch_arch_list(v)
    for g in live_gpus(s):
        cc = _cc(g)
        if cc and archs and suffix_is_the_cause(archs, cc):
            c = cc_tuple(cc)
            spec = [a for a in archs if a[-1] in "af"]
            yield hit("error", f"TORCH_CUDA_ARCH_LIST={v!r} builds arch-specific code ({' '.join(spec)}) that runs "
                      "only on its own CC (family-specific: its family), not on this GPU: extensions fail with 'no "
                      "kernel image is available'",
                      f"Add {c[0]}.{c[1]} (or {c[0]}.{c[1]}a for its own arch-specific features) to "
                      "TORCH_CUDA_ARCH_LIST and rebuild.", gpu=g)


def _pending_reset(g) -> bool:
    return bool(sub(g, "retired_pages").get("pending") or sub(g, "remapped_rows").get("pending"))


@check("ecc-uncorrectable", "gpu", "uncorrectable ECC errors since the last reboot", "hardware-fault",
       origin="hardware")
def _ecc_unc(s):
    for g in live_gpus(s):
        n = num(sub(g, "ecc").get("volatile_uncorrected"))
        if n and n > 0:
            if _pending_reset(g):
                yield hit("error", "uncorrectable ECC errors since boot and a row remap / page retirement pending: "
                          "reset before use (the bad memory stays mapped until then; results cannot be trusted)",
                          "Drain the GPU, reset it (`nvidia-smi -r -i N`, or reboot), then check `nvidia-smi -q -d "
                          "ECC,ROW_REMAPPER`; repeated errors mean an RMA.", gpu=g, facts={"uncorrectable": n})
            else:
                yield hit("error", "uncorrectable ECC error(s) since boot: results on this GPU cannot be trusted",
                          "Drain the GPU, check `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER` and `dmesg` for "
                          "Xid 48/63/64/94/95, reset it; repeated errors mean an RMA.", gpu=g,
                          facts={"uncorrectable": n})


@check("ecc-corrected", "gpu", "many corrected ECC errors", "hardware-fault", origin="hardware")
def _ecc_corr(s):
    for g in live_gpus(s):
        n = num(sub(g, "ecc").get("volatile_corrected"))
        if n and n >= 100:
            yield hit("warning", "corrected >= 100 single-bit ECC errors since boot: memory is degrading",
                      "Watch the count; schedule a GPU health check (`dcgmi diag -r 3`).", gpu=g,
                      facts={"corrected": n})


@check("ecc-disabled", "gpu", "ECC off on a GPU that supports it", origin="hardware")
def _ecc_off(s):
    for g in live_gpus(s):
        e = sub(g, "ecc")
        if e.get("enabled") is False and not e.get("pending"):
            yield hit("info", "ECC is disabled: memory errors go undetected",
                      "Enable it for long runs: `sudo nvidia-smi -i N -e 1` and reboot.", gpu=g)


@check("ecc-pending", "gpu", "an ECC mode change waits for a reboot", origin="hardware")
def _ecc_pending(s):
    for g in live_gpus(s):
        e = sub(g, "ecc")
        if isinstance(e.get("enabled"), bool) and isinstance(e.get("pending"), bool) and e["enabled"] != e["pending"]:
            yield hit("warning", f"ECC is {'on' if e['enabled'] else 'off'} now but {'on' if e['pending'] else 'off'} "
                      "after the next reboot; memory size and speed will change",
                      "Reboot (or reset the GPU) to apply the pending ECC mode before benchmarking.", gpu=g)


@check("memory-pending-reset", "gpu", "retired pages or a row remap wait for a GPU reset", "hardware-fault",
       origin="hardware")
def _pending(s):
    for g in live_gpus(s):
        if _pending_reset(g) and not (num(sub(g, "ecc").get("volatile_uncorrected")) or 0) > 0:
            rr = sub(g, "remapped_rows")
            yield hit("warning", f"a page retirement / row remap is pending ({rr.get('uncorrected', 0)} uncorrectable, "
                      f"{rr.get('corrected', 0)} correctable remaps): it takes effect at the next reset",
                      "Reset the GPU (`nvidia-smi -r -i N`) when it is idle.", gpu=g)


@check("retired-pages", "gpu", "memory pages retired for ECC errors", "hardware-fault", origin="hardware")
def _rp(s):
    for g in live_gpus(s):
        rp = sub(g, "retired_pages")
        dbe, sbe = num(rp.get("double_bit_ecc")) or 0, num(rp.get("single_bit_ecc")) or 0
        if dbe + sbe > 0:
            yield hit("error" if dbe + sbe >= 60 else "warning",
                      f"{dbe} page(s) retired for double-bit and {sbe} for single-bit ECC errors",
                      "At 60+ retired pages ask for an RMA; run `dcgmi diag -r 3`.", gpu=g)


@check("row-remap-failure", "gpu", "row remapping failed", "hardware-fault", origin="hardware")
def _rr_fail(s):
    for g in live_gpus(s):
        rr = sub(g, "remapped_rows")
        if rr.get("failure"):
            yield hit("error", "a row remapping failed (no spare rows left): the memory is faulty",
                      "Take the GPU out of service and ask for an RMA.", gpu=g)


SLOWDOWN = {"hw_slowdown": "hardware slowdown", "hw_thermal_slowdown": "hardware thermal slowdown",
            "sw_thermal_slowdown": "software thermal slowdown", "hw_power_brake_slowdown": "power-brake slowdown"}


@check("thermal", "gpu", "clocks held down by thermal/power slowdown, or the GPU is hot", origin="hardware")
def _thermal(s):
    for g in live_gpus(s):
        reasons = [r for r in (g.get("throttle_reasons") if isinstance(g.get("throttle_reasons"), list) else [])
                   if isinstance(r, str)]
        hit_r = [SLOWDOWN[r] for r in reasons if r in SLOWDOWN]
        t = num(g.get("temperature_c"))
        if hit_r or (t is not None and t >= 85):
            c = sub(g, "clocks_mhz")
            yield hit("warning", "thermal or power slowdown: clocks are held down, so timings taken now are not "
                      "representative", "Check cooling and power (`nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER`); "
                      "do not benchmark until it clears.", gpu=g,
                      facts={"per_gpu": {str(g.get("index")): {"reasons": hit_r, "temperature_c": t,
                                                                 "sm_mhz": c.get("sm"), "sm_max_mhz": c.get("sm_max")}}})


@check("power-capped", "gpu", "clocks limited by the software power cap", origin="hardware")
def _power_cap(s):
    for g in live_gpus(s):
        if "sw_power_cap" in (g.get("throttle_reasons") if isinstance(g.get("throttle_reasons"), list) else []):
            yield hit("info", "at its software power cap: clocks are lowered to stay under it",
                      "Normal under full load; if the cap was lowered, restore it with `nvidia-smi -pl`.", gpu=g)


@check("mig", "gpu", "MIG partitions the GPU")
def _mig(s):
    for g in live_gpus(s):
        m = sub(g, "mig")
        if m.get("enabled"):
            devs = [d for d in (m.get("devices") if isinstance(m.get("devices"), list) else []) if isinstance(d, dict)]
            if "devices" in m and not devs:
                yield hit("error", "MIG mode is on but no GPU instance exists: CUDA sees no device on this GPU",
                          "Create instances (`nvidia-smi mig -cgi 1g.10gb -C`) or disable MIG (`nvidia-smi -i N "
                          "-mig 0` and reset).", gpu=g)
                continue
            desc = ", ".join(f"{d.get('name', '?')} {gib(d.get('memory_total_bytes'))}" for d in devs[:8])
            yield hit("warning", f"in MIG mode with {len(devs) if devs else '?'} instance(s)"
                      + (f" ({desc})" if desc else "") + ": a process sees one instance, with its own SMs and "
                      "memory, not the whole GPU's " + gib(g.get("memory_total_bytes")),
                      "Select an instance by its MIG UUID in CUDA_VISIBLE_DEVICES (`nvidia-smi -L`); disable MIG "
                      "(`nvidia-smi -i N -mig 0`) for whole-GPU runs.", gpu=g,
                      facts={"mig_devices": [{"uuid": d.get("uuid"), "name": d.get("name"),
                                              "memory_total_bytes": d.get("memory_total_bytes")} for d in devs]})
        elif m.get("pending") and not m.get("enabled"):
            yield hit("warning", "MIG mode becomes enabled after the next GPU reset",
                      "Reset the GPU or revert with `nvidia-smi -i N -mig 0`.", gpu=g)


@check("persistence-off", "gpu", "persistence mode off")
def _persist(s):
    off = [g for g in live_gpus(s) if g.get("persistence_mode") is False]
    if off:
        yield hit("info", f"persistence mode is off on {len(off)} GPU(s): each new process pays driver "
                  "initialisation (up to seconds) and the first timing is skewed",
                  "`sudo nvidia-smi -pm 1` (or run nvidia-persistenced).")


@check("pcie-degraded", "gpu", "PCIe link narrower than it can be", origin="hardware")
def _pcie(s):
    for g in live_gpus(s):
        p = sub(g, "pcie")
        w, wmax = num(p.get("width")), num(p.get("width_max"))
        if w and wmax and 0 < w < wmax:
            yield hit("warning", f"PCIe link runs x{w} of x{wmax}: host<->device copies are slower",
                      "Reseat the card or check the riser/slot; the generation drops at idle by design, the width "
                      "does not.", gpu=g)


@check("memory-in-use", "gpu", "most device memory already taken", "oom", origin="resource-limit")
def _mem_used(s):
    for g in live_gpus(s):
        tot, free = num(g.get("memory_total_bytes")), num(g.get("memory_free_bytes"))
        if tot and free is not None and tot > 0 and free < 0.1 * tot:
            yield hit("warning", f"{gib(free)} free of {gib(tot)}: another process holds the memory",
                      "Find it with `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` before running.",
                      gpu=g)


@check("compute-mode", "gpu", "compute mode restricts processes")
def _cmode(s):
    for g in live_gpus(s):
        m = g.get("compute_mode")
        if m == "prohibited":
            yield hit("error", "compute mode Prohibited: no CUDA context can be created",
                      "`sudo nvidia-smi -i N -c DEFAULT`.", gpu=g)
        elif m in ("exclusive_process", "exclusive_thread"):
            yield hit("info", f"compute mode {m}: a second process gets 'all CUDA-capable devices are busy or "
                      "unavailable'", "Expected on shared clusters; otherwise `nvidia-smi -c DEFAULT`.", gpu=g)


@check("profiling-restricted", "gpu", "GPU performance counters are restricted to admin users")
def _profiling(s):
    params = sub(host(s), "nvidia_params")
    v = params.get("RmProfilingAdminOnly")
    euid = host(s).get("euid")
    if str(v).strip() == "1" and euid != 0 and gpus(s):
        yield hit("warning", "GPU performance counters are restricted to admin users (RmProfilingAdminOnly: 1 in "
                  "/proc/driver/nvidia/params) and this user is not root: Nsight Compute and CUPTI metrics fail "
                  "with ERR_NVGPUCTRPERM", "Profile as root (in a container: `--cap-add SYS_ADMIN`), or allow all "
                  "users: `echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/"
                  "nvidia-profiling.conf`, `sudo update-initramfs -u`, reboot.",
                  evidence=["host.nvidia_params.RmProfilingAdminOnly = 1"])
