"""Run a task's correctness check against trivial candidates; prints one JSON line. Executes the task's code.

Started by diagnose.timing.probe in a subprocess (python probe_runner.py TASK.py) with a timeout; it imports
nothing of the diagnose project, only the task and what the task imports (numpy, torch, ...).
The harness contract (docs/timing.md): the task defines get_inputs(); reference(*inputs) or
ref(*inputs) or a Model class (with get_init_inputs()); and check(out, expected[, inputs]) -> bool,
or ATOL / RTOL constants for an allclose check.
"""
import importlib.util
import inspect
import json
import os
import sys
import traceback

MARK = "DIAGNOSE-PROBE-RESULT "


def _seed(n):
    try:
        import random

        random.seed(n)
    except Exception:
        pass
    try:
        import numpy as np

        np.random.seed(n)
    except Exception:
        pass
    if "torch" in sys.modules:
        import torch

        torch.manual_seed(n)


def _kind(x):
    mod = type(x).__module__.split(".")[0]
    if mod == "torch":
        return "torch"
    if mod in ("numpy", "jax", "jaxlib", "cupy"):
        return mod if mod != "jaxlib" else "jax"
    if isinstance(x, (list, tuple)):
        return "seq"
    return "other"


def _map(fn, x):
    if isinstance(x, (list, tuple)):
        return type(x)(_map(fn, v) for v in x)
    return fn(x)


def _zeros(x):
    k = _kind(x)
    if k == "torch":
        import torch

        return torch.zeros_like(x)
    if k in ("numpy", "jax", "cupy"):
        import numpy as np

        return np.zeros_like(np.asarray(x)) if k != "cupy" else x * 0
    if isinstance(x, (int, float)):
        return type(x)(0)
    raise TypeError(f"cannot make zeros like a {type(x).__name__}")


def _empty(x):
    k = _kind(x)
    if k == "torch":
        import torch

        return torch.empty_like(x)
    if k in ("numpy", "jax"):
        import numpy as np

        return np.empty_like(np.asarray(x))
    raise TypeError(f"no uninitialised buffer for a {type(x).__name__}")


def _clone(x):
    k = _kind(x)
    if k == "torch":
        return x.clone()
    if k in ("numpy",):
        return x.copy()
    return x


def _stats(x):
    try:
        import numpy as np

        if _kind(x) == "torch":
            a = x.detach().float().cpu().numpy()
        else:
            a = np.asarray(x, dtype=float)
        return {"shape": list(a.shape), "max_abs": float(np.max(np.abs(a))) if a.size else 0.0,
                "mean_abs": float(np.mean(np.abs(a))) if a.size else 0.0,
                "zero_fraction": float(np.mean(a == 0)) if a.size else 1.0}
    except Exception:
        return {}


def _equal(a, b):
    try:
        import numpy as np

        if _kind(a) == "torch":
            return bool((a == b).all().item()) if a.shape == b.shape else False
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except Exception:
        return False


def main(path):
    out = {"task": path, "probes": [], "notes": []}
    d = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, d)
    os.chdir(d)
    spec = importlib.util.spec_from_file_location("diagnose_probe_task", path)
    task = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(task)
    if not callable(getattr(task, "get_inputs", None)):
        raise SystemExit(_fail(out, "the task defines no get_inputs(): see the harness contract in docs/timing.md"))
    ref_fn = getattr(task, "reference", None) or getattr(task, "ref", None)
    if ref_fn is None and getattr(task, "Model", None) is not None:
        init = task.get_init_inputs() if callable(getattr(task, "get_init_inputs", None)) else []
        model = task.Model(*init)
        if hasattr(model, "eval"):
            model.eval()
        ref_fn = model
    if not callable(ref_fn):
        raise SystemExit(_fail(out, "the task defines no reference(*inputs), ref(*inputs) or Model class"))
    chk = getattr(task, "check", None)
    if not callable(chk):
        atol, rtol = getattr(task, "ATOL", None), getattr(task, "RTOL", None)
        if atol is None and rtol is None:
            raise SystemExit(_fail(out, "the task defines no check(out, expected) and no ATOL/RTOL: "
                                        "there is no correctness check to probe"))
        out["notes"].append(f"check: allclose(out, expected, atol={atol}, rtol={rtol}) from the task's ATOL/RTOL")
        chk = _allclose(atol or 0.0, rtol or 0.0)
    try:
        nparams = len(inspect.signature(chk).parameters)
    except (TypeError, ValueError):
        nparams = 2

    def run_check(cand, expected, inputs):
        args = (cand, expected, inputs) if nparams >= 3 else (cand, expected)
        return bool(chk(*args))

    def call_ref(inputs):
        if "torch" in sys.modules:
            import torch

            with torch.no_grad():
                return ref_fn(*inputs)
        return ref_fn(*inputs)

    _seed(0)
    in1 = list(task.get_inputs())
    r1 = call_ref(in1)
    _seed(1)
    in2 = list(task.get_inputs())
    r2 = call_ref(in2)
    same_inputs = all(_equal(a, b) for a, b in zip(in1, in2)) if len(in1) == len(in2) else False
    if same_inputs:
        out["notes"].append("get_inputs() returned the same data under two seeds: a candidate that returns a "
                            "stored output cannot be told apart")
    out["reference"] = _stats(r2) if not isinstance(r2, (list, tuple)) else [_stats(x) for x in r2]
    cands = [("reference", "the reference's own output (must pass)", lambda: _map(_clone, r2)),
             ("zeros", "all zeros, shaped like the reference output", lambda: _map(_zeros, r2)),
             ("empty", "an uninitialised buffer (torch.empty_like / np.empty_like)", lambda: _map(_empty, r2)),
             ("passthrough", "the first input returned unchanged", lambda: in2[0]),
             ("stale", "the reference output for other inputs (a cached result)", lambda: r1)]
    for name, what, make in cands:
        rec = {"candidate": name, "what": what}
        try:
            cand = make()
        except Exception as e:       # a candidate that cannot be built for this output type
            rec.update(accepted=None, error=f"{type(e).__name__}: {e}"[:300])
            out["probes"].append(rec)
            continue
        try:
            rec["accepted"] = run_check(cand, r2, in2)
        except Exception as e:       # the check raising counts as a rejection, with its message
            rec.update(accepted=False, error=f"{type(e).__name__}: {e}"[:300])
        out["probes"].append(rec)
    print(MARK + json.dumps(out, default=str))


def _allclose(atol, rtol):
    def check(out, expected):
        if "torch" in sys.modules:
            import torch

            if isinstance(expected, torch.Tensor):
                return torch.allclose(out, expected, atol=atol, rtol=rtol)
        import numpy as np

        return np.allclose(np.asarray(out), np.asarray(expected), atol=atol, rtol=rtol)
    return check


def _fail(out, msg):
    out["error"] = msg
    print(MARK + json.dumps(out, default=str))
    return 3


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: probe_runner.py TASK.py", file=sys.stderr)
        sys.exit(2)
    try:
        main(sys.argv[1])
    except SystemExit:
        raise
    except BaseException:
        print(MARK + json.dumps({"task": sys.argv[1], "error": "the task raised while running: "
                                 + traceback.format_exc(limit=6)[-1500:]}))
        sys.exit(4)
