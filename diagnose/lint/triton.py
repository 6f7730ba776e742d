"""The checks of the Triton rules (their docs are in rules/triton.toml)."""
from __future__ import annotations

import ast

from diagnose.lint.pyctx import TL, PyContext
from diagnose.lint.registry import Hit, check
from diagnose.source import python as py

_LOW = ("float16", "bfloat16", "float8", "fp16", "bf16", "fp8", "int8")


def _tl_calls(ctx: PyContext, fn, short: str):
    return [c for c in py.calls(fn) if ctx.name(c.func) == f"{TL}.{short}"]


def _mask_arg(call, short):
    m = py.arg(call, 1 if short == "load" else 2, "mask")
    return None if m is None or (isinstance(m, ast.Constant) and m.value is None) else m


def _unmasked(ctx: PyContext, short: str):
    if ctx.divisibility_asserted:
        return
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        masks = [m for s in ("load", "store") for c in _tl_calls(ctx, fn, s) for m in [_mask_arg(c, s)] if m is not None]
        masked_any = bool(masks) or any(py.keyword(c, "boundary_check") is not None
                                        for s in ("load", "store") for c in _tl_calls(ctx, fn, s))
        masked_extents = {e for m in masks for e in fl.arange_extents(m)}
        for call in _tl_calls(ctx, fn, short):
            ptr = py.arg(call, 0, "pointer")
            if ptr is None or _mask_arg(call, short) is not None or py.keyword(call, "boundary_check") is not None:
                continue
            k = fl.kinds(ptr)
            if "tiled" not in k or "blockptr" in k:
                continue
            names = set().union(*(py.names_in(n) for n in fl.expand(ptr)))
            if fl.guarded_by_if(call, names):
                continue
            ext = fl.arange_extents(ptr)
            block = " x ".join(ext) or "the block"
            verb = "reads" if short == "load" else "writes"
            # a kernel that masks nothing and takes its sizes as constexprs is written for exact tiles
            # (block-sparse kernels over power-of-2 blocks): the invariant is not visible here, so a warning
            sizes = sorted(fl.constexprs - set(ext) - {n for n in fl.constexprs if n.isupper() and "BLOCK" in n})
            exact = not masked_any
            # the overhang is certain when the tile steps along its own dim (pid * B + tl.arange(0, B),
            # or a loop over range(.., .., B)), or when the kernel masks other accesses of the same
            # extent; a tile of whole blocks picked by strides (a block-sparse block) may be exact
            evident = _steps_own_dim(ctx, fl, ptr, ext) or bool(set(ext) & masked_extents)
            if exact:
                note = (f" (nothing in {fn.name} is masked" + (f" and its sizes {', '.join(sizes[:4])} are constexpr"
                                                             if sizes else "") + ": exact tiling may be intended)")
            elif not evident:
                note = (f" (the kernel masks no other access of extent {block} and the tile does not step along "
                        "its own dim: it may be an exact block)")
            else:
                note = ""
            yield Hit(call, f"tl.{short}({ctx.src.segment(ptr)}) in {fn.name} {verb} a whole tile with no "
                            f"mask: the last tile {verb} past the end unless the size is a multiple of {block}"
                            + note, severity="warning" if note else None,
                      facts={"kernel": fn.name, "pointer": ctx.src.segment(ptr), "block": ext,
                             "kernel_masks_nothing": not masked_any},
                      fix=f"pass mask= (offsets < size) to tl.{short}"
                          + (", and other= for the masked lanes" if short == "load" else "")
                          + "; or assert size % BLOCK == 0 in the launcher if that is guaranteed")


def _steps_own_dim(ctx, fl, ptr, ext) -> bool:
    """The pointer's offsets advance by the tile's own extent: `x * B` with x a program id (or
    anything moving) next to tl.arange(0, B), or a loop `for off in range(a, b, B)`."""
    if not ext:
        return False
    parts = fl.expand(ptr)
    names = set().union(*(py.names_in(n) for n in parts))
    for n in parts:
        for m in py.nodes(n):
            if isinstance(m, ast.BinOp) and isinstance(m.op, ast.Mult):
                for a, b in ((m.left, m.right), (m.right, m.left)):
                    if ctx.src.segment(b) in ext and "moving" in fl.kinds(a):
                        return True
    for loop in py.nodes(fl.fn):
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.target.id in names \
                and isinstance(loop.iter, ast.Call) and len(loop.iter.args) == 3 \
                and ctx.src.segment(loop.iter.args[2]) in ext:
            return True
    return False


@check("lint.triton.unmasked-load")
def unmasked_load(ctx):
    yield from _unmasked(ctx, "load")


@check("lint.triton.unmasked-store")
def unmasked_store(ctx):
    yield from _unmasked(ctx, "store")


_SINKS = {f"{TL}.{n}" for n in ("max", "min", "argmax", "argmin")}


@check("lint.triton.masked-load-no-other")
def masked_load_no_other(ctx):
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        for call in _tl_calls(ctx, fn, "load"):
            if _mask_arg(call, "load") is None or py.arg(call, 2, "other") is not None:
                continue
            parent = ctx.src.parent(call)
            if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
                continue
            sink = _first_sink(ctx, fn, parent.targets[0].id, parent)
            if sink is not None:
                what = "a division" if isinstance(sink, ast.BinOp) else f"{py.dotted(sink.func)}"
                yield Hit(call, f"tl.load({ctx.src.segment(py.arg(call, 0, 'pointer'))}) is masked but has no "
                                f"other=, and its value feeds {what} (line {sink.lineno}): the masked lanes "
                                "hold undefined values there",
                          facts={"kernel": fn.name, "sink_line": sink.lineno}, also=[sink])


def _reads(ctx, e, names) -> bool:
    if isinstance(e, ast.Call) and ctx.name(e.func) in (f"{TL}.where", f"{TL}.load"):
        return False
    if isinstance(e, ast.Name):
        return e.id in names
    return any(_reads(ctx, c, names) for c in ast.iter_child_nodes(e))


def _sink_in(ctx, stmt, tainted):
    """The first max/min/argmax/argmin call or division in stmt that reads a tainted name."""
    for n in sorted((n for n in py.nodes(stmt) if isinstance(n, (ast.Call, ast.BinOp))),
                    key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(n, ast.Call):
            method = isinstance(n.func, ast.Attribute) and n.func.attr in ("max", "min", "argmax", "argmin") \
                and ctx.name(n.func) not in _SINKS
            if ctx.name(n.func) in _SINKS and any(_reads(ctx, a, tainted) for a in n.args):
                return n
            if method and _reads(ctx, n.func.value, tainted):
                return n
        elif isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod)) and _reads(ctx, n.right, tainted):
            return n
    return None


def _first_sink(ctx, fn, name, start):
    """Follow the loaded value through the statements after start, in source order (an assignment
    from a clean value kills a name): the first sink that reads it, or None."""
    tainted = {name}
    stmts = sorted((s for s in py.nodes(fn) if isinstance(s, ast.stmt) and not isinstance(
        s, (ast.FunctionDef, ast.For, ast.While, ast.If, ast.With))), key=lambda s: (s.lineno, s.col_offset))
    for st in stmts:
        if (st.lineno, st.col_offset) <= (start.lineno, start.col_offset):
            continue
        sink = _sink_in(ctx, st, tainted)
        if sink is not None:
            return sink
        if isinstance(st, ast.Assign):
            hit = _reads(ctx, st.value, tainted)
            for t in st.targets:
                if isinstance(t, ast.Name):
                    (tainted.add if hit else tainted.discard)(t.id)
        elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and _reads(ctx, st.value, tainted):
            tainted.add(st.target.id)
        if not tainted:
            return None
    return None


@check("lint.triton.int32-offset-overflow")
def int32_offset_overflow(ctx):
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        runtime = set(fl.params) - fl.constexprs
        seen, found = set(), []
        for short in ("load", "store"):
            for call in _tl_calls(ctx, fn, short):
                ptr = py.arg(call, 0, "pointer")
                if ptr is None:
                    continue
                for e in fl.expand(ptr):
                    for m in py.nodes(e):
                        if not (isinstance(m, ast.BinOp) and isinstance(m.op, ast.Mult)) or id(m) in seen:
                            continue
                        for a, b in ((m.left, m.right), (m.right, m.left)):
                            ka = fl.kinds(a)
                            if "pid" in ka and "int64" not in ka and "arange" not in ka and \
                                    isinstance(b, ast.Name) and b.id in runtime and "int64" not in fl.kinds(b):
                                seen.add(id(m))
                                found.append((m, b.id))
                                break
        if not found:
            continue
        found.sort(key=lambda t: (t[0].lineno, t[0].col_offset))
        m, stride = found[0]
        more = f" ({len(found) - 1} more such product{'s' if len(found) > 2 else ''} in this kernel)" if len(found) > 1 else ""
        yield Hit(m, f"{ctx.src.segment(m)} in {fn.name} is int32 arithmetic (a program id times the runtime value "
                     f"{stride}){more}: it wraps once the offset passes 2^31 elements",
                  facts={"kernel": fn.name, "expression": ctx.src.segment(m),
                         "products": [ctx.src.segment(x) for x, _ in found[:10]]},
                  also=[x for x, _ in found[1:6]])


@check("lint.triton.tf32-dot")
def tf32_dot(ctx):
    names = ctx.host_text_names
    fp32 = any(n in names for n in ("torch.float32", "torch.float", "numpy.float32", "jax.numpy.float32"))
    low = any(n in names for n in ("torch.float16", "torch.half", "torch.bfloat16", "torch.float8_e4m3fn"))
    compared = [n for n in py.nodes(ctx.tree) if isinstance(n, ast.Call) and (ctx.name(n.func) or "") in (
        "torch.testing.assert_close", "torch.allclose", "numpy.testing.assert_allclose", "numpy.allclose")]
    if not (fp32 and not low and compared):
        return
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        for call in _tl_calls(ctx, fn, "dot"):
            prec = py.keyword(call, "input_precision")
            tf32 = py.keyword(call, "allow_tf32")
            if (prec is not None and py.literal(prec) not in ("tf32",)) or (tf32 is not None and py.literal(tf32) is False):
                continue
            ops = [py.arg(call, 0, "input"), py.arg(call, 1, "other")]
            if any(o is not None and any(s in ctx.src.segment(x) for x in fl.expand(o) for s in _LOW) for o in ops):
                continue
            yield Hit(call, f"tl.dot in {fn.name} runs fp32 inputs in TF32 (the default), and this file compares "
                            f"the result with an fp32 reference (line {compared[0].lineno}): TF32 keeps 10 mantissa "
                            "bits, errors ~1e-3 relative", facts={"kernel": fn.name}, also=[compared[0]])


def _axes(ctx, fn):
    """(axis, node) of every tl.program_id / tl.num_programs call with a literal axis."""
    out = []
    for c in py.calls(fn):
        if ctx.name(c.func) in (f"{TL}.program_id", f"{TL}.num_programs"):
            a = py.literal(py.arg(c, 0, "axis")) if py.arg(c, 0, "axis") is not None else None
            if isinstance(a, int):
                out.append((a, c))
    return out


@check("lint.triton.grid-axis-unsized")
def grid_axis_unsized(ctx):
    for fn in ctx.triton_kernels:
        axes = _axes(ctx, fn)
        if not axes:
            continue
        top, node = max(axes, key=lambda t: t[0])
        for launch in ctx.launches.get(fn.name, []):
            rank = ctx.grid_rank(launch)
            if rank is not None and top >= rank:
                yield Hit(launch, f"{fn.name} is launched with a {rank}-axis grid but reads tl.program_id({top}) "
                                  f"(line {node.lineno}): that axis is always 0, so only its first slice is computed",
                          facts={"kernel": fn.name, "grid_rank": rank, "axis": top}, also=[node])


@check("lint.triton.grid-axis-unused")
def grid_axis_unused(ctx):
    for fn in ctx.triton_kernels:
        used = {a for a, _ in _axes(ctx, fn)}
        for launch in ctx.launches.get(fn.name, []):
            rank = ctx.grid_rank(launch)
            g = launch.func.slice
            elts = g.elts if isinstance(g, ast.Tuple) else None
            for ax in range(rank or 0):
                if ax in used:
                    continue
                if elts is not None and py.literal(elts[ax]) == 1:
                    continue
                if elts is None:
                    continue     # the grid's size along the axis is not visible
                yield Hit(launch, f"the grid of {fn.name} sizes axis {ax} ({ctx.src.segment(elts[ax])}) but the "
                                  f"kernel never reads tl.program_id({ax}): every program along it redoes the "
                                  "same work and stores race", facts={"kernel": fn.name, "axis": ax})


def _operand_load(ctx, fl, e, depth=0):
    """The tl.load an operand of tl.dot comes from (through names, .to(), trans), or None."""
    if depth > 6 or e is None:
        return None, False
    if isinstance(e, ast.Call):
        n = ctx.name(e.func)
        if n == f"{TL}.load":
            return e, False
        if isinstance(e.func, ast.Attribute) and e.func.attr in ("to", "T"):
            return _operand_load(ctx, fl, e.func.value, depth + 1)
        if n in (f"{TL}.trans", f"{TL}.permute") and e.args:
            return _operand_load(ctx, fl, e.args[0], depth + 1)
        return None, False
    if isinstance(e, ast.Attribute) and e.attr == "T":
        return _operand_load(ctx, fl, e.value, depth + 1)
    if isinstance(e, ast.Name):
        vals = fl.assigns.get(e.id, [])
        for v in vals:
            ld, _ = _operand_load(ctx, fl, v, depth + 1)
            if ld is not None:
                return ld, True
    return None, False


def _in_loop(ctx, node, fn) -> bool:
    for a in ctx.src.ancestors(node):
        if a is fn:
            return False
        if isinstance(a, (ast.For, ast.While)):
            return True
    return False


@check("lint.triton.shared-memory-estimate")
def shared_memory_estimate(ctx):
    limit = ctx.tinfo["shared_optin"]
    names = ctx.host_text_names
    elem = 2 if any(n in names for n in ("torch.float16", "torch.half", "torch.bfloat16")) else (
        4 if "torch.float32" in names else 2)
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        tiles = {}          # load node -> (extents, pipelined)
        for call in _tl_calls(ctx, fn, "dot"):
            for op in (py.arg(call, 0, "input"), py.arg(call, 1, "other")):
                ld, _ = _operand_load(ctx, fl, op)
                if ld is None:
                    continue
                ext = fl.arange_extents(py.arg(ld, 0, "pointer"))
                if len(ext) == 2:
                    tiles[ld] = (ext, _in_loop(ctx, ld, fn))
        if not tiles:
            continue
        over, checked = [], 0
        for cfg in ctx.configs(fn):
            stages = cfg.get("num_stages", 3)
            buffers = max(1, stages + ctx.tinfo.get("triton_stage_buffers", -1))
            total = 0
            for ext, pipelined in tiles.values():
                vals = [int(x) if x.isdigit() else cfg.get(x) for x in ext]
                if any(not isinstance(v, int) for v in vals):
                    total = None
                    break
                total += vals[0] * vals[1] * elem * (buffers if pipelined else 1)
            if total is None:
                continue
            checked += 1
            if total > limit:
                over.append((cfg, total, stages, buffers))
        if not over:
            continue
        all_over = checked == len(over)
        autotune = any(c["_autotune"] for c, *_ in over)
        for cfg, total, stages, buffers in over:
            shown = {k: v for k, v in cfg.items() if not k.startswith("_")}
            sev = "error" if (all_over or not cfg["_autotune"]) else "warning"
            tail = ("every config is over it: the kernel cannot launch there" if all_over and autotune else
                    "the autotuner skips this config there" if cfg["_autotune"] else "the launch fails there")
            yield Hit(cfg["_node"], f"the {fn.name} tiles need about {total:,} bytes of shared memory "
                                    f"({buffers} buffers for num_stages={stages}, {elem}-byte elements, config {shown}); {ctx.target} "
                                    f"allows {limit:,}: {tail}",
                      facts={"kernel": fn.name, "estimate_bytes": total, "limit_bytes": limit, "target": ctx.target,
                             "num_stages": stages, "buffers": buffers, "element_bytes": elem, "config": shown},
                      severity=sev)


@check("lint.triton.fp16-accumulator")
def fp16_accumulator(ctx):
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        for name, vals in fl.assigns.items():
            init = next((v for v in vals if isinstance(v, ast.Call) and ctx.name(v.func) in (f"{TL}.zeros", f"{TL}.full")), None)
            if init is None:
                continue
            dt = py.keyword(init, "dtype") or (init.args[1] if ctx.name(init.func) == f"{TL}.zeros" and len(init.args) > 1
                                               else init.args[2] if len(init.args) > 2 else None)
            dts = ctx.name(dt) if dt is not None else None
            if dts not in (f"{TL}.float16", f"{TL}.bfloat16"):
                continue
            for loop in py.nodes(fn):
                if not isinstance(loop, (ast.For, ast.While)):
                    continue
                for n in py.nodes(loop):
                    acc = (isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == name
                           and isinstance(n.op, ast.Add)) or (
                        isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
                        and name in py.names_in(n.value))
                    if acc:
                        yield Hit(init, f"{name} in {fn.name} is a {dts.rsplit('.', 1)[1]} accumulator summed in a "
                                        f"loop (line {n.lineno}): each add rounds to 8-11 mantissa bits and the sum "
                                        "drifts from an fp32 reference", facts={"kernel": fn.name, "accumulator": name},
                                  also=[n])
                        break
                else:
                    continue
                break


_EXACT = ("torch.equal", "numpy.array_equal", "numpy.testing.assert_array_equal")


def _exact_compares(ctx):
    out = []
    for n in py.nodes(ctx.tree):
        if isinstance(n, ast.Call):
            name = ctx.name(n.func) or ""
            if name in _EXACT:
                out.append(n)
            elif name in ("torch.testing.assert_close", "numpy.testing.assert_allclose"):
                at, rt = py.keyword(n, "atol"), py.keyword(n, "rtol")
                if at is not None and rt is not None and py.literal(at) == 0 and py.literal(rt) == 0:
                    out.append(n)
    return sorted(out, key=lambda n: n.lineno)


@check("lint.triton.float-atomic-exact-compare")
def float_atomic_exact_compare(ctx):
    exact = _exact_compares(ctx)
    if not exact:
        return
    for fn in ctx.triton_kernels:
        for call in _tl_calls(ctx, fn, "atomic_add"):
            val = py.arg(call, 1, "val")
            if isinstance(py.literal(val), int):
                continue         # an integer counter: exact in any order
            yield Hit(call, f"tl.atomic_add in {fn.name} adds floats in whatever order the programs run, and "
                            f"the result is compared exactly (line {exact[0].lineno}): the sum changes from run to "
                            "run in its last bits", facts={"kernel": fn.name}, also=[exact[0]])


@check("lint.triton.block-ptr-no-boundary-check")
def block_ptr_no_boundary_check(ctx):
    if ctx.divisibility_asserted:
        return
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        for short in ("load", "store"):
            for call in _tl_calls(ctx, fn, short):
                ptr = py.arg(call, 0, "pointer")
                if ptr is None or "blockptr" not in fl.kinds(ptr) or py.keyword(call, "boundary_check") is not None:
                    continue
                if fl.guarded_by_if(call, set()):
                    continue
                yield Hit(call, f"tl.{short} of the block pointer {ctx.src.segment(ptr)} in {fn.name} has no "
                                "boundary_check: a block that overhangs the tensor's shape touches memory past it",
                          facts={"kernel": fn.name})


def _pow2(v) -> bool:
    return isinstance(v, int) and v > 0 and v & (v - 1) == 0


@check("lint.triton.non-pow2-arange")
def non_pow2_arange(ctx):
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        cfgs = ctx.configs(fn)
        for call in _tl_calls(ctx, fn, "arange"):
            if len(call.args) != 2:
                continue
            lo, hi = call.args
            lv = ctx.const(lo, fn)
            hv = ctx.const(hi, fn)
            if isinstance(lv, int) and isinstance(hv, int):
                if not _pow2(hv - lv):
                    yield Hit(call, f"tl.arange({lv}, {hv}) spans {hv - lv}, not a power of 2: Triton refuses to "
                                    "compile it", facts={"kernel": fn.name, "range": hv - lv})
                continue
            if isinstance(hi, ast.Name) and hi.id in fl.constexprs and (lv == 0):
                for cfg in cfgs:
                    v = cfg.get(hi.id)
                    if isinstance(v, int) and not _pow2(v):
                        yield Hit(cfg["_node"], f"{hi.id}={v} here, and {fn.name} calls tl.arange(0, {hi.id}) "
                                                f"(line {call.lineno}): {v} is not a power of 2, so it does not compile",
                                  facts={"kernel": fn.name, hi.id: v}, also=[call])


@check("lint.triton.arange-runtime-bound")
def arange_runtime_bound(ctx):
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        runtime = set(fl.params) - fl.constexprs
        for call in _tl_calls(ctx, fn, "arange"):
            for a in call.args:
                if isinstance(a, ast.Name) and a.id in runtime:
                    yield Hit(call, f"tl.arange in {fn.name} takes {a.id}, a runtime argument: its bounds must be "
                                    f"tl.constexpr (annotate {a.id}: tl.constexpr, a power of 2)",
                              facts={"kernel": fn.name, "argument": a.id})


@check("lint.triton.grid-floor-division")
def grid_floor_division(ctx):
    if ctx.divisibility_asserted:
        return
    for fn in ctx.triton_kernels:
        for launch in ctx.launches.get(fn.name, []):
            g = launch.func.slice
            scope = ctx.enclosing_function(launch)
            if isinstance(g, ast.Name) and scope is not None:      # grid = lambda meta: (...)
                vals = py.assignments(scope).get(g.id, [])
                g = vals[0] if len(vals) == 1 else g
            if isinstance(g, ast.Lambda):
                g = g.body
            if not isinstance(g, ast.Tuple):
                continue
            for ax, e in enumerate(g.elts):
                if isinstance(e, ast.BinOp) and isinstance(e.op, ast.FloorDiv):
                    yield Hit(e, f"grid axis {ax} of {fn.name} is {ctx.src.segment(e)}: floor division drops the "
                                 f"remainder, so the last {ctx.src.segment(e.left)} % {ctx.src.segment(e.right)} "
                                 "elements are never computed",
                              facts={"kernel": fn.name, "axis": ax, "grid": ctx.src.segment(e)},
                              fix=f"use triton.cdiv({ctx.src.segment(e.left)}, {ctx.src.segment(e.right)}) and mask the "
                                  "last block")


@check("lint.triton.mask-off-by-one")
def mask_off_by_one(ctx):
    for fn in ctx.triton_kernels:
        fl = ctx.flow(fn)
        runtime = set(fl.params) - fl.constexprs
        seen = set()
        for short in ("load", "store"):
            for call in _tl_calls(ctx, fn, short):
                m = _mask_arg(call, short)
                if m is None:
                    continue
                for e in fl.expand(m):
                    for c in py.nodes(e):
                        if not isinstance(c, ast.Compare) or len(c.ops) != 1 or id(c) in seen:
                            continue
                        op, left, right = c.ops[0], c.left, c.comparators[0]
                        if isinstance(op, ast.GtE):
                            left, right, op = right, left, ast.LtE()
                        if isinstance(op, ast.LtE) and isinstance(right, ast.Name) and right.id in runtime \
                                and "arange" in fl.kinds(left):
                            seen.add(id(c))
                            yield Hit(c, f"mask `{ctx.src.segment(c)}` in {fn.name} keeps the lane whose offset "
                                         f"equals {right.id}: it touches one element past the end",
                                      facts={"kernel": fn.name, "mask": ctx.src.segment(c)},
                                      fix=f"use < ({ctx.src.segment(left)} < {right.id})")


_IDENTITY = {"max": "-inf", "argmax": "-inf", "min": "+inf", "argmin": "+inf"}


def _const_float(e):
    """A constant `other=` value: a number, float('inf') / -float('inf') / math.inf, else None."""
    v = py.literal(e)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    neg = isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub)
    inner = e.operand if neg else e
    if isinstance(inner, ast.Call) and py.dotted(inner.func) == "float" and inner.args:
        s = py.literal(inner.args[0])
        if isinstance(s, str):
            try:
                x = float(s)
            except ValueError:
                return None
            return -x if neg else x
    if py.dotted(inner) in ("math.inf", "float.inf", "numpy.inf", "np.inf"):
        return float("-inf") if neg else float("inf")
    return None


@check("lint.triton.masked-load-bad-other")
def masked_load_bad_other(ctx):
    for fn in ctx.triton_kernels:
        for call in _tl_calls(ctx, fn, "load"):
            other = py.arg(call, 2, "other")
            if _mask_arg(call, "load") is None or other is None:
                continue
            v = _const_float(other)
            parent = ctx.src.parent(call)
            if v is None or not (isinstance(parent, ast.Assign) and len(parent.targets) == 1
                                 and isinstance(parent.targets[0], ast.Name)):
                continue
            sink = _first_sink(ctx, fn, parent.targets[0].id, parent)
            if sink is None:
                continue
            if isinstance(sink, ast.BinOp):
                bad, need = v == 0.0, "a non-zero value (1.0)"
                what = "a division"
            else:
                op = (py.dotted(sink.func) or "").rsplit(".", 1)[-1]
                need = _IDENTITY.get(op)
                bad = need is not None and not ((need == "-inf" and v == float("-inf")) or
                                                (need == "+inf" and v == float("inf")))
                what = f"tl.{op}"
            if bad:
                yield Hit(other, f"the masked lanes of this load get other={ctx.src.segment(other)}, and the value "
                                 f"feeds {what} (line {sink.lineno}), whose identity is {need}: the padding lanes "
                                 "can win (a row of negatives has max 0) or divide by zero",
                          facts={"kernel": fn.name, "other": ctx.src.segment(other), "needs": need}, also=[sink])
