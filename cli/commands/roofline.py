"""`diagnose roofline`: is a measured kernel time possible? Achieved TFLOP/s and
GB/s against the device's dense peaks and memory bandwidth."""

EPILOG = """shapes by op:
  matmul       M,N,K
  bmm          B,M,N,K
  conv2d       N,C,H,W,K,R,S[,stride[,pad]]
  attention    B,H,S,D  or  B,H,Sq,Sk,D  (add 'causal')
  elementwise  d0,d1,...   (--inputs/--outputs tensors of that size)
  reduction    d0,...,dn   (reduces the last dimension)

exit status: 0 possible, 1 impossible (faster than the hardware allows),
2 bad input. Peaks and their sources: diagnose/devices/devices.toml
(docs/roofline.md)."""


ASSUMED = ("dense peak at the vendor's boost clock; the least traffic (each operand read once, the result "
           "written once); one device, no MIG slice")


def add_parser(sub):
    import argparse

    p = sub.add_parser("roofline", help="check a kernel time against the device's peak compute and bandwidth",
                       description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", help="matmul | bmm | conv2d | attention | elementwise | reduction")
    p.add_argument("--shape", help="sizes of the op, e.g. 4096,4096,4096 (see below)")
    p.add_argument("--dtype", default="bf16", help="fp64 fp32 tf32 bf16 fp16 fp8 int8 (default bf16)")
    p.add_argument("--time-ms", type=float, help="the measured time of one call, milliseconds")
    p.add_argument("--device", help="device name or alias (--list-devices)")
    p.add_argument("--env", metavar="SNAPSHOT", help="take the device from a `diagnose env --json` snapshot")
    p.add_argument("--gpu-index", type=int, default=0, help="which GPU of the snapshot (default 0)")
    p.add_argument("--flops", type=float, help="the operation count, for any op (instead of --op/--shape)")
    p.add_argument("--bytes", type=float, help="the least bytes the op must move (with --flops)")
    p.add_argument("--launches", type=int, default=1, help="kernel launches in the timed call (default 1)")
    p.add_argument("--inputs", type=int, default=1, help="elementwise: input tensors (default 1)")
    p.add_argument("--outputs", type=int, default=1, help="elementwise: output tensors (default 1)")
    p.add_argument("--list-devices", action="store_true", help="list the device table and exit")
    p.add_argument("--json", action="store_true", help="print the reading as JSON")
    return p


def run(args) -> int:
    import json
    from pathlib import Path

    from cli.errors import UsageError
    from diagnose.devices import DeviceError, all_devices, from_snapshot, lookup
    from diagnose.roofline import RooflineError, judge, op_cost

    if args.list_devices:
        return _list(all_devices(), args.json)
    notes = []
    try:
        if args.env:
            try:
                snap = json.loads(Path(args.env).read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise UsageError(f"{args.env}: cannot read the snapshot ({e}); make one with `diagnose env --json`")
            dev, notes = from_snapshot(snap, args.gpu_index)
            if args.device and lookup(args.device).id != dev.id:
                raise UsageError(f"--device {args.device} disagrees with {args.env} ({dev.id}): pass one of them")
        elif args.device:
            dev = lookup(args.device)
        else:
            raise UsageError("name the device: --device NAME (--list-devices) or --env SNAPSHOT")
        if args.time_ms is None:
            raise UsageError("give the measured time: --time-ms T")
        if args.flops is not None or args.bytes is not None:
            if args.op:
                raise UsageError("give either --op/--shape or --flops/--bytes, not both")
            flops, nbytes, formula, ws = args.flops or 0.0, args.bytes or 0.0, "given (--flops/--bytes)", None
        elif args.op and args.shape:
            c = op_cost(args.op, args.shape, args.dtype, args.inputs, args.outputs)
            flops, nbytes, formula, ws = c.flops, c.bytes, c.formula, c.working_set
        else:
            raise UsageError("give the work: --op OP --shape SIZES, or --flops F --bytes B")
        r = judge(flops, nbytes, args.time_ms * 1e-3, dev, args.dtype, args.launches, ws)
    except (DeviceError, RooflineError) as e:
        raise UsageError(str(e)) from None
    r.notes = notes + r.notes
    if args.json:
        doc = {"schema": "diagnose.roofline/1", "op": args.op, "shape": args.shape, "formula": formula,
               "assumed": ASSUMED, **r.to_json()}
        print(json.dumps(doc, indent=2))
    else:
        print(_text(r, args, formula))
    return 1 if r.verdict == "impossible" else 0


def _text(r, args, formula) -> str:
    import textwrap

    from findings import render

    d = r.device
    wrap = lambda s, ind="": textwrap.fill(s, 80, initial_indent=ind, subsequent_indent=ind + "  ")  # noqa: E731
    work = f"{args.op} {args.shape} {r.dtype}" if args.op else f"{r.dtype}"
    lines = [wrap(f"{work} in {args.time_ms:g} ms on {d.name}"),
             wrap(f"work: {r.flops:.4g} FLOP, {r.bytes:.4g} B  ({formula})", "  "),
             ""]
    pc = f"{r.peak_tflops:g}" if r.peak_tflops else "no figure"
    sc = f"{r.share_compute:6.1%}" if r.share_compute is not None else "     -"
    lines.append(f"  {'achieved':<12}{r.achieved_tflops:12.4g} TFLOP/s {sc} of {pc} TFLOP/s dense {r.dtype}")
    lines.append(f"  {'':<12}{r.achieved_gbs:12.4g} GB/s    {r.share_memory:6.1%} of {d.bandwidth_gbs:g} GB/s")
    fl = "  ".join(f"{k} {v * 1e3:.4g} ms" for k, v in sorted(r.floors_s.items()))
    lines.append(wrap(f"floors: {fl}", "  "))
    lines.append(f"  bound: {r.bound}")
    lines.append("")
    if r.findings:     # the finding below says it in full
        lines.append(f"verdict: {r.verdict} ({r.floor_s / r.time_s:.0%} of the {r.bound} ceiling)")
    else:
        lines.append(wrap(f"verdict: {r.verdict}: {r.reason}"))
    for n in r.notes:
        lines.append(wrap(f"note: {n}"))
    lines.append(wrap("assumed: " + ASSUMED))
    lines.append(f"peaks: {d.source('compute').url}")      # a URL is not wrapped
    if r.findings:
        lines += ["", render.text(r.findings)]
    return "\n".join(lines)


def _list(devices, as_json: bool) -> int:
    import json

    if as_json:
        print(json.dumps({"schema": "diagnose.devices/1", "devices": [d.to_json() for d in devices]}, indent=2))
        return 0
    print(f"{'id':<12} {'bf16':>7} {'fp16':>7} {'fp8':>7} {'fp32':>6} {'GB/s':>6} {'L2 MB':>5}  name")
    for d in devices:
        def g(k):
            v = d.peak_tflops.get(k)
            return f"{v:g}" if v is not None else "-"
        l2 = f"{d.l2_mb:g}" if d.l2_mb else "-"
        print(f"{d.id:<12} {g('bf16'):>7} {g('fp16'):>7} {g('fp8'):>7} {g('fp32'):>6} {d.bandwidth_gbs:>6g} {l2:>5}  "
              f"{d.name[:30]}")
    print("dense TFLOP/s; sources and every dtype: diagnose roofline --list-devices --json")
    return 0
