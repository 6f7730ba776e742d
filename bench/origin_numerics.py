"""How often the float32-comparison origin rule (diagnose/advice/origin.toml,
origin.float32-comparison-off-beyond-reduced-precision) reads rounding as logic, and logic as logic.

    python -m bench.origin_numerics          # needs torch (CPU is enough); `make origin-numerics`

Every case is a real `torch.testing.assert_close` failure produced here, wrapped as a traceback and
diagnosed end to end (diagnose_text): the tool's origin is what is counted, not a copy of the rule.

- rounding: an op computed in bf16, fp16 or TF32 (inputs rounded to a 10-bit mantissa) against the
  same op in float32, at float32's default tolerances, the log naming no dtype (what a
  `assert_close(out.float(), ref)` of a reduced-precision kernel prints): matmuls of many shapes
  (signed and non-negative data), softmax, layernorm, gelu, row sums, exp at three input scales,
  convolutions. The right origin is numerics; kernel-logic is a false alarm.
- logic: planted bugs in float32 (a mask lane leaking into a softmax, a sum off by one element, a
  biased variance, a missing eps, a dropped K tail, a wrong scale, a missing 1/sqrt(d)). The rule
  names kernel-logic only when the numbers say so; a bug that reads like rounding stays numerics
  (a miss, not a false alarm).
"""
from __future__ import annotations

import collections
import sys

RULE = "origin.float32-comparison-off-beyond-reduced-precision"
TRIALS = 4


def _message(a, b) -> str | None:
    import torch

    try:
        torch.testing.assert_close(a, b)
    except AssertionError as e:
        return str(e)
    return None


def _log(message: str) -> str:
    return ('Traceback (most recent call last):\n  File "check.py", line 9, in <module>\n'
            "    torch.testing.assert_close(out, ref)\n"
            '  File "<site-packages>/torch/testing/_comparison.py", line 1631, in assert_close\n'
            "    raise error_metas[0].to_error(msg)\n"
            f"AssertionError: {message}\n")


def cases():
    """(kind, name, message) for every rounding and logic case that fails its comparison."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(1)

    def tf32(t):
        i = t.contiguous().view(torch.int32)
        return ((i + 0x1000) & ~0x1FFF).view(torch.float32)

    def low(t, p):
        return {"bf16": lambda t: t.bfloat16().float(), "fp16": lambda t: t.half().float(), "tf32": tf32}[p](t)

    def in_dtype(fn, x, p):      # the op itself computed in the low precision (TF32 only rounds inputs)
        if p == "tf32":
            return fn(tf32(x))
        return fn(x.to(torch.bfloat16 if p == "bf16" else torch.half)).float()

    out = []
    for p in ("bf16", "fp16", "tf32"):
        for m, k, n in ((16, 16, 16), (32, 64, 32), (64, 64, 64), (32, 256, 32), (128, 128, 128), (32, 4096, 32),
                        (64, 1024, 64), (8, 8192, 8), (256, 512, 256), (16, 2048, 16)):
            for _ in range(TRIALS):
                a, w = torch.randn(m, k), torch.randn(k, n)
                for pos in (False, True):
                    aa, ww = (a.abs(), w.abs()) if pos else (a, w)
                    out.append(("rounding", f"matmul{'+' if pos else ''} {m}x{k}x{n} {p}",
                                _message(low(aa, p) @ low(ww, p), aa @ ww)))
        for shape in ((8, 100), (64, 128), (32, 1024), (4, 4096)):
            for scale in (1, 3, 10):
                x = torch.randn(*shape) * scale
                d = shape[-1:]
                out += [("rounding", f"softmax {shape} x{scale} {p}",
                         _message(in_dtype(lambda t: torch.softmax(t, -1), x, p), torch.softmax(x, -1))),
                        ("rounding", f"layernorm {shape} x{scale} {p}",
                         _message(in_dtype(lambda t: F.layer_norm(t, d), x, p), F.layer_norm(x, d))),
                        ("rounding", f"gelu {shape} x{scale} {p}", _message(F.gelu(low(x, p)), F.gelu(x))),
                        ("rounding", f"rowsum {shape} x{scale} {p}", _message(low(x, p).sum(-1), x.sum(-1))),
                        ("rounding", f"exp {shape} x{scale} {p}", _message(torch.exp(low(x, p)), torch.exp(x)))]
        for c, hw in ((8, 16), (32, 32)):
            x, w = torch.randn(2, c, hw, hw), torch.randn(c, c, 3, 3)
            out.append(("rounding", f"conv {c}x{hw} {p}", _message(F.conv2d(low(x, p), low(w, p)), F.conv2d(x, w))))
    for shape in ((8, 100), (64, 128), (32, 1000), (4, 4096), (16, 50)):
        x = torch.randn(*shape)
        ref = torch.softmax(x, -1)
        d = shape[-1:]
        pad = 2 ** (shape[1] - 1).bit_length() - shape[1]
        if pad:
            xp = torch.cat([x, torch.zeros(shape[0], pad)], 1)
            out.append(("logic", f"softmax mask lane leaks {shape}", _message(torch.softmax(xp, -1)[:, :shape[1]], ref)))
        e = torch.exp(x)
        a, w = torch.randn(shape[0], 256), torch.randn(256, shape[1])
        out += [("logic", f"softmax sum skips one {shape}", _message(e / e[:, 1:].sum(-1, keepdim=True), ref)),
                ("logic", f"layernorm unbiased var {shape}",
                 _message((x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True) + 1e-5).sqrt(), F.layer_norm(x, d))),
                ("logic", f"layernorm no eps {shape}",
                 _message((x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True), F.layer_norm(x, d))),
                ("logic", f"matmul K tail dropped {shape}", _message(a[:, :240] @ w[:240], a @ w)),
                ("logic", f"matmul scale 1.1 {shape}", _message((a @ w) * 1.1, a @ w)),
                ("logic", f"softmax scale missing {shape}", _message(torch.softmax(x * 1.25, -1), ref))]
    return [(k, n, m) for k, n, m in out if m]


def main() -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        print("bench.origin_numerics needs torch (pip install -e '.[torch]')", file=sys.stderr)
        return 2
    from diagnose.engine import diagnose_text

    counts = collections.Counter()
    fired = []
    for kind, name, message in cases():
        d = diagnose_text(_log(message))
        hit = any(RULE in r for r in d.reasoning)
        counts[kind, "n"] += 1
        counts[kind, "fired"] += hit
        counts[kind, d.origin] += 1
        if hit:
            fired.append(f"  {kind:8} {name}")
    for kind, want in (("rounding", "numerics"), ("logic", "kernel-logic")):
        n = counts[kind, "n"]
        print(f"{kind}: {n} failing comparisons, rule fired on {counts[kind, 'fired']} "
              f"({counts[kind, 'fired'] / n:.3f}); origin {want} on {counts[kind, want]}")
    print("fired on:")
    print("\n".join(fired))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
