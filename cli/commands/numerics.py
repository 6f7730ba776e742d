"""`diagnose numerics OUT REF`: why a kernel's output differs from a reference (measures, ULPs, tolerance, pattern, verdict)."""


def add_parser(sub):
    p = sub.add_parser("numerics", help="compare a kernel's output with a reference and read the error pattern",
                       description=__doc__)
    p.add_argument("out", metavar="OUT", help="the kernel's output: .npy, .npz, .pt or .safetensors")
    p.add_argument("ref", metavar="REF", help="the reference, same formats")
    p.add_argument("--dtype", help="the output's dtype (fp64, fp32, fp16, bf16, fp8e4m3, fp8e5m2); uint16/uint8 "
                                   "arrays are read as bf16/fp8 bit patterns. Default: the file's dtype")
    p.add_argument("--ref-dtype", help="the reference's dtype, when its file stores bit patterns")
    p.add_argument("--acc", help="accumulation dtype (fp32, tf32, fp16, bf16): sets the recommended tolerance")
    p.add_argument("--k", type=int, help="reduction length (K of a matmul): sets the recommended tolerance")
    p.add_argument("--atol", type=float, help="absolute tolerance (default: recommended)")
    p.add_argument("--rtol", type=float, help="relative tolerance (default: recommended)")
    p.add_argument("--key", help="tensor name or index inside OUT (and REF unless --ref-key)")
    p.add_argument("--ref-key", help="tensor name or index inside REF")
    p.add_argument("--json", action="store_true", help="print the reading as JSON")
    return p


def run(args) -> int:
    import json

    from cli.errors import UsageError
    from diagnose.numerics import NumericsError, analyse, load_tensor

    if args.k is not None and args.k <= 0:
        raise UsageError("--k must be a positive reduction length")
    try:
        out = load_tensor(args.out, args.key, args.dtype)
        ref = load_tensor(args.ref, args.ref_key if args.ref_key is not None else args.key, args.ref_dtype)
        reading = analyse(out.values, ref.values, out.dtype, ref.dtype, acc=args.acc, k=args.k,
                          atol=args.atol, rtol=args.rtol)
    except NumericsError as e:
        raise UsageError(f"{e}") from None
    if args.json:
        doc = {"schema": "diagnose.numerics/1", "out": {"path": out.path, "key": out.key, "dtype": out.dtype},
               "ref": {"path": ref.path, "key": ref.key, "dtype": ref.dtype},
               "family": reading.family, "origin": reading.origin, **reading.to_json()}
        print(json.dumps(doc, indent=2, default=_jsonable))
    else:
        _print(reading, out, ref)
    return 1 if reading.verdict == "likely defect" else 0


def _jsonable(v):
    import numpy as np

    if isinstance(v, np.generic):
        return v.item()
    return str(v)


def _print(reading, out, ref) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    con = Console()
    m = reading.measures
    colour = "red" if reading.verdict == "likely defect" else "green"
    con.print(Text.assemble(("verdict: ", "bold"), (reading.verdict, f"bold {colour}"),
                            f"  ({reading.family} / {reading.origin})"))
    con.print(Text(reading.decided_by))
    t = Table(title=Text(f"{out.path} vs {ref.path}  shape {m['shape']}  out dtype {m['dtype']}"), show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    rows = [
        ("max |out-ref|", f"{m['abs_max']:.4g} at {m['abs_max_index']}"),
        ("|out-ref| p50 / p90 / p99 / p99.9", f"{m['abs_p50']:.3g} / {m['abs_p90']:.3g} / {m['abs_p99']:.3g} / {m['abs_p99.9']:.3g}"),
        ("relative max / p99 / p50", f"{m['rel_max']:.3g} / {m['rel_p99']:.3g} / {m['rel_p50']:.3g}"),
        ("  (denominator floor)", f"{m['rel_floor']:.3g}"),
        (f"ULP of {m['dtype']} max / p99 / p50", f"{m['ulp_max']:.4g} / {m['ulp_p99']:.3g} / {m['ulp_p50']:.3g}"),
        ("‖out-ref‖ / ‖ref‖", f"{m['norm_ratio']:.3g}"),
        (f"mismatched ({m['tolerance']} rtol={m['rtol']:g}, atol={m['atol']:g})",
         f"{m['mismatched']} / {m['size']} ({m['mismatch_fraction']:.3%})"),
        ("NaN / +Inf / -Inf in out", f"{m['out_nan']} / {m['out_posinf']} / {m['out_neginf']}"),
        ("NaN / +Inf / -Inf in ref", f"{m['ref_nan']} / {m['ref_posinf']} / {m['ref_neginf']}"),
        ("non-finite only in out / only in ref", f"{m['nonfinite_out_only']} / {m['nonfinite_ref_only']}"),
    ]
    for k, v in rows:
        t.add_row(Text(k), Text(v))
    con.print(t)
    f = Table(title="findings", show_header=True)
    for col in ("pattern", "origin", "reading"):
        f.add_column(col)
    for x in reading.findings:
        f.add_row(Text(x.pattern), Text(x.origin), Text(x.summary))
    con.print(f)
    con.print(Text("recommended tolerance: " + reading.recommended.explanation))
    con.print(Text(reading.recommended.torch_default))
