"""Tolerances: the frameworks' defaults per dtype (data/defaults.toml), the error model of a reduction
in given formats, and the tolerance it implies."""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from diagnose.numerics.formats import FORMATS, fmt

# -- tolerances ----------------------------------------------------------------------------------

def _load_defaults() -> dict:
    with open(Path(__file__).with_name("data") / "defaults.toml", "rb") as fh:
        return tomllib.load(fh)


DEFAULTS = _load_defaults()
# torch.testing.assert_close defaults (rtol, atol) per dtype; float8 dtypes are not in its table: exact.
TORCH_DEFAULTS = {k: tuple(v) for k, v in DEFAULTS["torch"].items() if isinstance(v, list) and k != "other"}


def default_tolerance(framework: str, dtype: str) -> tuple[float, float]:
    """(rtol, atol) the framework's comparison function uses for this dtype by default."""
    t = DEFAULTS[framework]
    v = t.get(dtype, t["other"])
    return float(v[0]), float(v[1])


def defaults_text(dtype: str) -> str:
    """torch, JAX and numpy defaults for one dtype, in words."""
    parts = []
    for fw, label in (("torch", "torch assert_close"), ("jax", "JAX tests"), ("numpy", "numpy assert_allclose")):
        r, a = default_tolerance(fw, dtype)
        parts.append(f"{label} rtol={r:g}, atol={a:g}")
    return f"defaults for {dtype}: " + "; ".join(parts)


@dataclass
class Tolerance:
    rtol: float
    atol: float
    source: str                 # "given" | "recommended"
    explanation: str
    torch_default: str = ""


def torch_default_reading(out_dtype: str, ref_dtype: str) -> str:
    """What torch.testing.assert_close(out, ref) would compare for these dtypes, in words."""
    tol = [TORCH_DEFAULTS.get(d, (0.0, 0.0)) for d in (out_dtype, ref_dtype)]
    rtol, atol = max(t[0] for t in tol), max(t[1] for t in tol)
    head = ""
    if out_dtype != ref_dtype:
        head = (f"torch.testing.assert_close(out, ref) fails on dtype ({out_dtype} vs {ref_dtype}) unless "
                f"check_dtype=False; then it takes the looser of the two dtypes' defaults: ")
    else:
        head = "torch.testing.assert_close(out, ref) by default uses "
    text = head + f"rtol={rtol:g}, atol={atol:g}"
    if any(d.startswith("float8") for d in (out_dtype, ref_dtype)) and rtol == 0:
        text += " (float8 has no default tolerance in torch: an exact comparison)"
    return text


def recommend_tolerance(out_dtype: str, acc: str | None = None, k: int | None = None,
                        ref_scale: float | None = None, ref_dtype: str | None = None) -> Tolerance:
    """A tolerance that a correct kernel meets, derived from how it computes, with the reasoning.

    Model: the result is rounded once to the output format (u_out), and a sum of K products in the
    accumulation format gathers rounding errors that grow like sqrt(K) * u_acc when they are
    independent (the worst case is K * u_acc). TF32 rounds the inputs to 10 mantissa bits. A factor
    of 2 of margin; atol scales rtol by the reference's RMS, because cancellation can leave results
    near zero whose error is set by the operands' size, not the result's."""
    fo = fmt(out_dtype)
    parts = [f"{fo.name} output rounding: u = 2^-{fo.mant + 1} = {fo.unit_roundoff:.3g}"]
    bound = fo.unit_roundoff
    if acc:
        fa = fmt(acc)
        if fa.name == "tf32":
            bound += 2 * fa.unit_roundoff
            parts.append(f"TF32 matmul rounds both inputs to 10 mantissa bits: 2 x 2^-11 = {2 * fa.unit_roundoff:.3g}")
            fa_acc = FORMATS["float32"]
        else:
            fa_acc = fa
        kk = k or 1
        term = math.sqrt(kk) * fa_acc.unit_roundoff
        bound += term
        worst = kk * fa_acc.unit_roundoff
        parts.append(f"{fa_acc.name} accumulation over K={kk}: sqrt(K) x u = {term:.3g} (worst case K x u = {worst:.3g})")
    elif k:
        term = math.sqrt(k) * fo.unit_roundoff
        bound += term
        parts.append(f"accumulation in the output format ({fo.name}) over K={k}: sqrt(K) x u = {term:.3g}")
    rtol = float(f"{2 * bound:.2g}")
    if ref_scale and ref_scale > 0 and np.isfinite(ref_scale):
        atol = float(f"{rtol * ref_scale:.2g}")
        atol_text = f"atol = rtol x RMS(ref) ({ref_scale:.3g}) = {atol:.2g}"
    else:
        atol = TORCH_DEFAULTS.get(fo.name, (0, 1e-5))[1] or 1e-5
        atol_text = f"atol = {atol:g} (torch's default for {fo.name}; no reference scale known)"
    expl = ("; ".join(parts) + f"; with 2x margin: expect relative error around {rtol:.2g}, so rtol = {rtol:.2g}, "
            + atol_text)
    return Tolerance(rtol, atol, "recommended", expl,
                     torch_default_reading(fo.name, fmt(ref_dtype).name if ref_dtype else fo.name))




# -- the error model of a reduction ---------------------------------------------------------------
# ‖error‖/‖ref‖ of each source, with p the format's precision in bits (stored mantissa + 1):
C_ROUND = 0.42   # one rounding to p bits: 0.42 x 2^-p (Gaussian data; 0.39-0.43 analytically)
C_INPUT = 0.60   # both inputs of every product rounded to p bits (TF32): sqrt(2) x 0.42 x 2^-p
C_ACC = 0.30     # sequential accumulation of K products in p bits: 0.30 x 2^-p x sqrt(K)
                 # (numpy fp32, K = 64..4096; blocked and tree sums stay below it, so an implied K is an
                 # upper bound's worth of naive order, and real reductions reach longer K for the same error)
K_MAX = 65536    # the longest reduction assumed when none is given
MARGIN = 2.0     # a measured error up to 2x the model's prediction is still explained


def _p(name: str) -> int:
    return FORMATS[name].mant + 1


@dataclass(frozen=True)
class Model:
    """One plausible way a kernel computes: output format, accumulation format, inputs' rounding."""
    out: str
    acc: str | None = None          # None: no reduction (elementwise)
    inputs: str | None = None       # products' inputs rounded to this format (tf32)

    @property
    def name(self) -> str:
        short = {"float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "tf32": "TF32",
                 "float8_e4m3fn": "fp8 e4m3", "float8_e5m2": "fp8 e5m2"}
        acc = f"{short.get(self.acc, self.acc)} accumulation" if self.acc else "no reduction"
        head = f"{short.get(self.inputs, self.inputs)} inputs with {acc}" if self.inputs else acc
        return head + (f" to a {short.get(self.out, self.out)} output" if self.out not in ("float32", "float64") else "")

    def ratio(self, k: float) -> float:
        """Predicted ‖out-ref‖/‖ref‖ for a reduction over k terms."""
        t = (C_ROUND * 2.0 ** -_p(self.out)) ** 2
        if self.inputs:
            t += (C_INPUT * 2.0 ** -_p(self.inputs)) ** 2
        if self.acc:
            t += (C_ACC * 2.0 ** -_p(self.acc)) ** 2 * k
        return math.sqrt(t)

    def implied_k(self, nu: float) -> float | None:
        """The reduction length at which this model's predicted error reaches `nu` (None: no reduction)."""
        if not self.acc:
            return None
        rest = nu * nu - self.ratio(0) ** 2
        return max(1.0, rest / (C_ACC * 2.0 ** -_p(self.acc)) ** 2) if rest > 0 else 1.0


def plausible_models(out_dtype: str, acc: str | None = None) -> list[Model]:
    """The computations assumed for an output dtype when the task does not say (or the one it says)."""
    o = fmt(out_dtype).name
    if acc:
        a = fmt(acc).name
        if a == "tf32":
            return [Model(o, "float32", "tf32")]
        return [Model(o, a)]
    if o == "float64":
        return [Model(o, "float64")]
    if o == "float32":
        return [Model(o, "float32"), Model(o, "float32", "tf32")]
    if o == "tf32":
        return [Model("float32", "float32", "tf32")]
    return [Model(o, "float32")]


# precisions a measured number of bits may be consistent with: (bits, words)
_NAMED_PRECISIONS = [
    (53, "float64"), (24, "float32"), (math.log2(C_ROUND / (C_INPUT * 2.0 ** -11)), "a TF32 matmul (inputs rounded to 10 stored bits)"),
    (11, "float16 rounding"), (8, "bfloat16 rounding"),
    (math.log2(C_ROUND / (C_INPUT * 2.0 ** -8)), "bfloat16 inputs to a product"),
    (4, "float8 e4m3 rounding"), (3, "float8 e5m2 rounding"),
]


def effective_bits(nu: float) -> float:
    """‖out-ref‖/‖ref‖ as the precision (bits) whose one rounding gives the same error."""
    return math.log2(C_ROUND / nu) if nu > 0 else math.inf


def consistent_with(nu: float) -> list[str]:
    """The named precisions within a bit of the measured one, and the accumulation lengths that reach it."""
    bits = effective_bits(nu)
    out = [w for b, w in _NAMED_PRECISIONS if abs(b - bits) <= 1.0]
    for acc in ("float16", "bfloat16"):
        k = Model("float32", acc).implied_k(nu)
        if k and 16 <= k <= 1e6 and C_ACC * 2.0 ** -_p(acc) * math.sqrt(k) > C_ROUND * 2.0 ** -24:
            out.append(f"{acc} accumulation over K ~ {k:.3g}")
    return out


@dataclass
class Explanation:
    nu: float                       # measured ‖out-ref‖/‖ref‖ of the noise
    bits: float
    models: list                    # [(Model, predicted ratio at the assumed K, implied K)]
    explained_by: Model | None
    k_assumed: str                  # "K=300, given" | "K up to 65536 assumed"
    consistent: list[str]

    def to_json(self) -> dict:
        return {"noise_ratio": self.nu, "effective_bits": round(self.bits, 2) if math.isfinite(self.bits) else None,
                "assumed_k": self.k_assumed, "consistent_with": self.consistent,
                "explained_by": self.explained_by.name if self.explained_by else None,
                "models": [{"model": m.name, "predicted_ratio": p, "implied_k": k} for m, p, k in self.models]}


def margin(n: int) -> float:
    """How far above the model a measured ratio may lie: MARGIN, widened for few elements, where one
    norm ratio is a noisy statistic (and cancellation leaves single results near zero)."""
    return MARGIN * (1 + 8 / math.sqrt(max(n, 1)))


def explain(nu: float, out_dtype: str, acc: str | None = None, k: int | None = None, n: int = 1 << 30) -> Explanation:
    """Does a plausible computation in the claimed dtypes give an error as large as `nu` (measured on n elements)?"""
    models = plausible_models(out_dtype, acc)
    kk = k if k else K_MAX
    rows, best = [], None
    for m in models:
        pred = m.ratio(kk if m.acc else 0)
        ik = m.implied_k(nu)
        rows.append((m, pred, ik))
        if best is None and nu <= margin(n) * pred:
            best = m
    return Explanation(nu, effective_bits(nu), rows, best,
                       f"K={k}, given" if k else f"K up to {K_MAX} assumed", consistent_with(nu))
