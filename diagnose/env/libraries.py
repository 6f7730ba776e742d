"""Section `libraries`: which libcudart / libcublas / libcudnn / libnccl the loader would pick.

The probe (probes/gather.py `library_inventory`) lists, per library, every file the dynamic loader could
find, in its search order: LD_LIBRARY_PATH, then the RUNPATH of framework wheels (site-packages/nvidia/*/lib,
which torch's CUDA wheels use), then the ldconfig cache. A library in LD_LIBRARY_PATH wins over the wheel's.
"""
from __future__ import annotations

from diagnose.env.registry import check, hit
from diagnose.env.snap import cuda_mm, fw, libraries, ver, vstr

SEVERE = {"libcudnn": "error"}      # torch checks cuDNN's version at load and refuses a mismatch


def candidates(s, lib: str) -> list[dict]:
    c = libraries(s).get(lib, {}).get("candidates")
    return [x for x in (c if isinstance(c, list) else []) if isinstance(x, dict) and isinstance(x.get("path"), str)]


@check("shadowed-wheel", "libraries", "a library in LD_LIBRARY_PATH shadows the one a framework wheel ships",
       "missing-library")
def _shadow(s):
    if not fw(s, "torch").get("cuda") and not fw(s, "jax"):
        return
    for lib in sorted(libraries(s)):
        cs = candidates(s, lib)
        ld = [c for c in cs if c.get("via") == "LD_LIBRARY_PATH"]
        wheel = [c for c in cs if str(c.get("via", "")).startswith("wheel")]
        for w in wheel:
            same = [c for c in ld if c.get("soname") == w.get("soname")]
            if not same:
                continue
            first = same[0]
            fv, wv = ver(first.get("version")), ver(w.get("version"))
            if fv and wv and fv[:2] != wv[:2]:
                sev = SEVERE.get(lib, "warning") if fv < wv else "warning"
                yield hit(sev, f"LD_LIBRARY_PATH puts {first['path']} ({lib} {vstr(fv)}) ahead of the "
                          f"{w.get('via', 'wheel')[6:] or 'wheel'} copy ({vstr(wv)}, {w['path']}): the framework "
                          f"loads {vstr(fv)}"
                          + (" and stops with 'cuDNN version incompatibility'" if lib == "libcudnn" and fv < wv else ""),
                          f"Remove {first['path'].rsplit('/', 1)[0]} from LD_LIBRARY_PATH (the wheel ships its own "
                          f"{lib}), or unset LD_LIBRARY_PATH in this environment.",
                          facts={"library": lib, "picked": first["path"], "wheel": w["path"]},
                          evidence=[f"libraries.{lib}.candidates: {first['path']}"])
                break


@check("ld-library-path-mixed", "libraries", "LD_LIBRARY_PATH mixes CUDA versions", "missing-library")
def _mixed(s):
    cs = [c for c in candidates(s, "libcudart") if c.get("via") == "LD_LIBRARY_PATH"]
    vers = []
    for c in cs:
        mm = cuda_mm(c.get("version"))
        if mm and mm not in vers:
            vers.append(mm)
    if len(vers) > 1:
        yield hit("warning", f"LD_LIBRARY_PATH holds libcudart of CUDA {' and '.join(vstr(v) for v in vers)} (first "
                  f"wins: {vstr(vers[0])}, {cs[0]['path']}): a program can load the runtime of one toolkit and build "
                  "with another", "Keep one CUDA lib64 on LD_LIBRARY_PATH, matching the nvcc first on PATH.",
                  facts={"libcudart": [c["path"] for c in cs]})


@check("runtime-libs-mismatch", "libraries", "the loader picks libcudart and libcublas of different CUDA versions",
       "missing-library")
def _rt_blas(s):
    def pick(lib):
        cs = [c for c in candidates(s, lib) if not str(c.get("via", "")).startswith("wheel")]
        return cs[0] if cs else None
    a, b = pick("libcudart"), pick("libcublas")
    if a and b:
        va, vb = cuda_mm(a.get("version")), ver(b.get("version"))
        if va and vb and va[0] != vb[0]:
            yield hit("warning", f"the system loader picks libcudart {a.get('version')} ({a['path']}) but libcublas "
                      f"{b.get('version')} ({b['path']}): programs linked against the toolkit mix CUDA majors",
                      "Install libcublas of the same CUDA version, or fix LD_LIBRARY_PATH / the ldconfig order.")
