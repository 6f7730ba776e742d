"""`diagnose numerics OUT REF`: why a kernel's output differs from a reference (noise floor and error
model, the structure above it, an optional baseline, the task's tolerance, verdict)."""


def add_parser(sub):
    p = sub.add_parser("numerics", help="compare a kernel's output with a reference and read the error pattern",
                       description=__doc__)
    p.add_argument("out", metavar="OUT", help="the kernel's output: .npy (memory-mapped), .npz, .pt or .safetensors")
    p.add_argument("ref", metavar="REF", help="the high-precision reference, same formats")
    p.add_argument("--baseline", metavar="BASE", help="the same op run by the framework in the same low precision: "
                                                       "the kernel's error is judged against the baseline's (within 2x)")
    p.add_argument("--input", metavar="IN", help="the kernel's input (same shape as OUT): the tolerance review "
                                                  "checks whether an identity kernel would pass")
    p.add_argument("--dtype", help="the output's dtype (fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2); uint16/uint8 "
                                   "arrays are read as bf16/fp8 bit patterns. Default: the file's dtype")
    p.add_argument("--ref-dtype", help="the reference's dtype, when its file stores bit patterns")
    p.add_argument("--acc", help="accumulation dtype (fp32, tf32, fp16, bf16). Default: every plausible one "
                                 "for the output dtype (fp32; also tf32 for an fp32 output)")
    p.add_argument("--k", type=int, help="reduction length (K of a matmul). Default: implied from the error, "
                                         "up to 65536")
    p.add_argument("--atol", type=float, help="the task's absolute tolerance (reviewed; default: recommended)")
    p.add_argument("--rtol", type=float, help="the task's relative tolerance (reviewed; default: recommended)")
    p.add_argument("--assert-log", metavar="LOG", help="take rtol/atol from the assert_close/assert_allclose "
                                                       "message in this log")
    p.add_argument("--key", help="tensor name or index inside OUT (and REF, BASE unless --ref-key)")
    p.add_argument("--ref-key", help="tensor name or index inside REF")
    p.add_argument("--json", action="store_true", help="print the reading as JSON (schema diagnose.numerics/2)")
    return p


def run(args) -> int:
    import json

    from cli.errors import UsageError
    from diagnose.numerics import NumericsError, analyse, load_tensor, parse_mismatch_text

    if args.k is not None and args.k <= 0:
        raise UsageError("--k must be a positive reduction length")
    rtol, atol, source = args.rtol, args.atol, "given"
    if args.assert_log:
        try:
            with open(args.assert_log, "r", encoding="utf-8", errors="replace") as fh:
                text = fh.read(16 << 20)
        except OSError as e:
            raise UsageError(f"{args.assert_log}: cannot read ({e.strerror or e}); give a log file") from None
        parsed = parse_mismatch_text(text)
        if "rtol" not in parsed and "atol" not in parsed:
            raise UsageError(f"{args.assert_log}: no assert_close/assert_allclose tolerance found; "
                             "pass --rtol and --atol instead")
        rtol = parsed.get("rtol", rtol if rtol is not None else 0.0)
        atol = parsed.get("atol", atol if atol is not None else 0.0)
        source = "the log's"
    try:
        out = load_tensor(args.out, args.key, args.dtype)
        ref_key = args.ref_key if args.ref_key is not None else args.key
        ref = load_tensor(args.ref, ref_key, args.ref_dtype)
        base = load_tensor(args.baseline, ref_key if args.key is None else args.key, args.dtype) \
            if args.baseline else None
        inp = load_tensor(args.input) if args.input else None
        reading = analyse(out, ref, out.dtype, ref.dtype, acc=args.acc, k=args.k, atol=atol, rtol=rtol,
                          tol_source=source, baseline=base, inp=inp)
    except NumericsError as e:
        raise UsageError(f"{e}") from None
    if args.json:
        doc = {"schema": "diagnose.numerics/2", "out": {"path": out.path, "key": out.key, "dtype": out.dtype},
               "ref": {"path": ref.path, "key": ref.key, "dtype": ref.dtype},
               "baseline": {"path": base.path, "key": base.key, "dtype": base.dtype} if base else None,
               "family": reading.family, "origin": reading.origin, **reading.to_json()}
        print(json.dumps(doc, indent=2, default=_jsonable))
    else:
        _print(reading, out, ref, base)
    return 1 if reading.verdict == "likely defect" else 0


def _jsonable(v):
    import math

    import numpy as np

    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v if isinstance(v, (int, float)) else str(v)


def _print(reading, out, ref, base) -> None:
    import textwrap

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from findings.render import text_block

    con = Console(width=80)
    m = reading.measures
    colour = "red" if reading.verdict == "likely defect" else "green"
    con.print(Text.assemble(("verdict: ", "bold"), (reading.verdict, f"bold {colour}"),
                            f"  ({reading.family} / {reading.origin})"))
    con.print(Text(textwrap.fill(reading.decided_by, 80)))
    for a in reading.assumed:
        con.print(Text(textwrap.fill("assumed: " + a, 80, subsequent_indent="  ")))
    title = f"{out.path} vs {ref.path}" + (f" (baseline {base.path})" if base else "")
    t = Table(title=Text(f"{title}\nshape {m['shape']}  out dtype {m['dtype']}"), show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    sampled = "" if m["percentiles_from"] >= m["size"] else f" (from {m['percentiles_from']} sampled)"
    nf = m["noise_floor"]
    rows = [
        ("max |out-ref|", f"{m['abs_max']:.4g} at {m['abs_max_index']}"),
        ("|out-ref| p50 / p90 / p99 / p99.9" + sampled,
         f"{m['abs_p50']:.3g} / {m['abs_p90']:.3g} / {m['abs_p99']:.3g} / {m['abs_p99.9']:.3g}"),
        ("relative max / p99 / p50", f"{m['rel_max']:.3g} / {m['rel_p99']:.3g} / {m['rel_p50']:.3g}"),
        ("  (denominator floor)", f"{m['rel_floor']:.3g}"),
        (f"ULP of {m['dtype']} max / p99 / p50", f"{m['ulp_max']:.4g} / {m['ulp_p99']:.3g} / {m['ulp_p50']:.3g}"),
        ("‖out-ref‖ / ‖ref‖ (all / noise)", f"{m['norm_ratio']:.3g} / {nf['noise_ratio']:.3g}"),
        ("above the noise floor", f"{m['above_floor']} / {m['size']}"),
        (f"mismatched ({m['tolerance']} rtol={m['rtol']:g}, atol={m['atol']:g})",
         f"{m['mismatched']} / {m['size']} ({m['mismatch_fraction']:.3%})"),
        ("NaN / +Inf / -Inf in out", f"{m['out_nan']} / {m['out_posinf']} / {m['out_neginf']}"),
        ("NaN / +Inf / -Inf in ref", f"{m['ref_nan']} / {m['ref_posinf']} / {m['ref_neginf']}"),
        ("non-finite only in out / only in ref", f"{m['nonfinite_out_only']} / {m['nonfinite_ref_only']}"),
    ]
    for k, v in rows:
        t.add_row(Text(k), Text(v))
    con.print(t)
    con.print(Text("findings, ranked:", style="bold"))
    for i, f in enumerate(reading.findings, 1):
        con.print(Text(f"{i}. " + text_block(f, 77).replace("\n", "\n   ")))
    con.print(Text(textwrap.fill("recommended tolerance: " + reading.recommended.explanation, 80)))
    con.print(Text(textwrap.fill(reading.recommended.torch_default, 80)))
