"""The checks of the Pallas rules (their docs are in rules/pallas.toml)."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from diagnose.lint.pyctx import PyContext, eval_int
from diagnose.lint.registry import Hit, check
from diagnose.source import python as py

PL = "jax.experimental.pallas"


@dataclass
class Spec:
    node: ast.Call
    shape: ast.AST | None
    index_map: ast.AST | None
    array_shape: list | None = None     # the array's dims when known (out_shape)


@dataclass
class Call:
    node: ast.Call
    scope: object
    grid: ast.AST | None
    prefetch: int
    specs: list = field(default_factory=list)


def _defaults(ctx, fn) -> dict:
    """A function's parameters with literal int defaults (`bm=128`): the values it runs with by default."""
    if fn is None:
        return {}
    a = fn.args
    out = {}
    pos = a.posonlyargs + a.args
    for arg, d in zip(pos[len(pos) - len(a.defaults):], a.defaults):
        v = py.literal(d)
        if isinstance(v, int):
            out[arg.arg] = v
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        v = py.literal(d) if d is not None else None
        if isinstance(v, int):
            out[arg.arg] = v
    return out


def _bind(ctx, node, scope):
    """A Name bound once in scope (or the module) to its value; else the node itself."""
    for _ in range(4):
        if not isinstance(node, ast.Name):
            return node
        vals = py.assignments(scope).get(node.id, []) if scope is not None else []
        if not vals:
            vals = [n.value for n in ctx.tree.body if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets)]
        if len(vals) != 1:
            return node
        node = vals[0]
    return node


def _spec(ctx, node, scope) -> Spec | None:
    node = _bind(ctx, node, scope)
    if not (isinstance(node, ast.Call) and ctx.name(node.func) in (f"{PL}.BlockSpec",)):
        return None
    shape, imap = py.keyword(node, "block_shape"), py.keyword(node, "index_map")
    for a in node.args:
        if isinstance(a, ast.Lambda) or (isinstance(a, ast.Name) and imap is None and shape is not None):
            imap = imap or a
        elif shape is None:
            shape = a
        elif imap is None:
            imap = a
    return Spec(node, _bind(ctx, shape, scope) if shape is not None else None,
                _bind(ctx, imap, scope) if imap is not None else None)


_MAKERS = {"jax.numpy.ones": 0, "jax.numpy.zeros": 0, "jax.numpy.empty": 0, "jax.numpy.full": 0,
           "jax.random.normal": 1, "jax.random.uniform": 1, "numpy.ones": 0, "numpy.zeros": 0, "numpy.empty": 0}


def _array_shape(ctx, node, scope, depth=0):
    """The shape of an array when the file shows it: a name bound to jnp.ones/zeros/empty/full((...)),
    jax.random.normal(key, (...)), `x.shape` of such a name, or a literal tuple; else None."""
    if node is None or depth > 5:
        return None
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return _array_shape(ctx, node.value, scope, depth + 1)
    if isinstance(node, ast.Tuple):
        dims = [eval_int(ctx, e, scope) for e in node.elts]
        return dims
    node = _bind(ctx, node, scope)
    if isinstance(node, ast.Call):
        i = _MAKERS.get(ctx.name(node.func) or "")
        if i is not None:
            shp = py.keyword(node, "shape") or (node.args[i] if len(node.args) > i else None)
            if isinstance(shp, ast.Constant) and isinstance(shp.value, int):
                return [shp.value]
            return _array_shape(ctx, shp, scope, depth + 1) if shp is not None else None
    return None


def _call_args(ctx, n, scope):
    """The arrays a pallas_call is applied to: `pl.pallas_call(...)(x, y)` or `f = pl.pallas_call(...)`
    then `f(x, y)` (the first such call)."""
    parent = ctx.src.parent(n)
    if isinstance(parent, ast.Call) and parent.func is n:
        return parent.args
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        for c in py.nodes(scope if scope is not None else ctx.tree):
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == name:
                return c.args
    return []


def pallas_calls(ctx: PyContext) -> list[Call]:
    cache = ctx.__dict__.get("_pallas_calls")
    if cache is not None:
        return cache
    out = []
    for n in py.nodes(ctx.tree):
        if not (isinstance(n, ast.Call) and ctx.name(n.func) == f"{PL}.pallas_call"):
            continue
        scope = ctx.enclosing_function(n)
        holder = n
        gs = py.keyword(n, "grid_spec")
        prefetch = 0
        if gs is not None:
            gs = _bind(ctx, gs, scope)
            if isinstance(gs, ast.Call):
                holder = gs
                k = py.keyword(gs, "num_scalar_prefetch")
                prefetch = py.literal(k) if k is not None and isinstance(py.literal(k), int) else 0
        grid = py.keyword(holder, "grid")
        call = Call(n, scope, _bind(ctx, grid, scope) if grid is not None else None, prefetch)
        out_shape = _bind(ctx, py.keyword(n, "out_shape"), scope) if py.keyword(n, "out_shape") is not None else None
        args = _call_args(ctx, n, scope)
        prefetch_args = call.prefetch
        for key in ("in_specs", "out_specs"):
            v = py.keyword(holder, key)
            if v is None:
                continue
            v = _bind(ctx, v, scope)
            items = v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]
            for pos, item in enumerate(items):
                s = _spec(ctx, item, scope)
                if s is None:
                    continue
                if key == "out_specs" and isinstance(out_shape, ast.Call) and (out_shape.args or py.keyword(out_shape, "shape")):
                    s.array_shape = _array_shape(ctx, py.arg(out_shape, 0, "shape"), scope)
                elif key == "in_specs" and len(args) > pos + prefetch_args:
                    s.array_shape = _array_shape(ctx, args[pos + prefetch_args], scope)
                call.specs.append(s)
        out.append(call)
    ctx.__dict__["_pallas_calls"] = out
    return out


def _grid_rank(ctx, call) -> int | None:
    g = call.grid
    if g is None:
        return None
    if isinstance(g, ast.Tuple):
        return len(g.elts)
    if eval_int(ctx, g, call.scope, names=_defaults(ctx, call.scope)) is not None or isinstance(g, ast.BinOp):
        return 1
    return None


def _tpu(ctx) -> bool | None:
    mods = set(ctx.src.aliases.values()) | {n.module for n in py.nodes(ctx.tree) if isinstance(n, ast.ImportFrom) and n.module}
    names = {a.name for n in py.nodes(ctx.tree) if isinstance(n, ast.ImportFrom) and n.module == PL for a in n.names}
    if any(m.startswith(f"{PL}.tpu") for m in mods) or "tpu" in names:
        return True
    if any(m.startswith((f"{PL}.triton", f"{PL}.mosaic_gpu", f"{PL}.gpu")) for m in mods) or \
            names & {"triton", "mosaic_gpu", "gpu"}:
        return False
    return None


@check("lint.pallas.tpu-block-shape")
def tpu_block_shape(ctx: PyContext):
    tpu = _tpu(ctx)
    if tpu is False:
        return
    sub, lane = ctx.targets["tpu"]["sublane"], ctx.targets["tpu"]["lane"]
    for call in pallas_calls(ctx):
        names = _defaults(ctx, call.scope)
        for s in call.specs:
            if not isinstance(s.shape, ast.Tuple) or len(s.shape.elts) < 2:
                continue
            dims = s.shape.elts[-2:]
            vals = [None if py.literal(d) is None and isinstance(d, ast.Constant) else eval_int(ctx, d, call.scope, names=names)
                    for d in dims]
            arr = s.array_shape[-2:] if s.array_shape and len(s.array_shape) == len(s.shape.elts) else [None, None]
            for v, need, full, axis in zip(vals, (sub, lane), arr, ("second-to-last", "last")):
                if v is None or v % need == 0 or (full is not None and v == full):
                    continue
                known = full is not None
                sev = "error" if (tpu and known) else "warning"
                unless = "" if known else f", unless it is exactly the array's {axis} dim"
                shown = str(v) if isinstance(dims[0 if axis != "last" else 1], ast.Constant) else \
                    f"{ctx.src.segment(dims[0 if axis != 'last' else 1])} = {v}"
                yield Hit(s.node, f"block shape {ctx.src.segment(s.shape)} has {shown} in its {axis} dim, not a "
                                  f"multiple of {need}{unless}: Mosaic TPU refuses the block"
                                  + ("" if tpu else " (if this runs on TPU)"),
                          facts={"block": ctx.src.segment(s.shape), "dim": v, "multiple": need,
                                 "array_dim": full}, severity=sev)
                break


@check("lint.pallas.index-map-arity")
def index_map_arity(ctx: PyContext):
    for call in pallas_calls(ctx):
        rank = _grid_rank(ctx, call)
        if rank is None:
            continue
        want = rank + call.prefetch
        for s in call.specs:
            if not isinstance(s.index_map, ast.Lambda):
                continue
            a = s.index_map.args
            if a.vararg is not None:
                continue
            got = len(a.posonlyargs + a.args)
            if got != want:
                extra = f" + {call.prefetch} scalar-prefetch refs" if call.prefetch else ""
                yield Hit(s.index_map, f"index_map takes {got} argument{'s' if got != 1 else ''} but the grid "
                                       f"{ctx.src.segment(call.grid)} has {rank} ax{'es' if rank != 1 else 'is'}{extra}: "
                                       "pallas_call fails when it calls the index map",
                          facts={"index_map_args": got, "grid_rank": rank, "scalar_prefetch": call.prefetch},
                          also=[call.grid])


@check("lint.pallas.index-map-rank")
def index_map_rank(ctx: PyContext):
    for call in pallas_calls(ctx):
        for s in call.specs:
            if not isinstance(s.index_map, ast.Lambda) or not isinstance(s.shape, ast.Tuple):
                continue
            body = s.index_map.body
            got = len(body.elts) if isinstance(body, ast.Tuple) else 1
            want = len(s.shape.elts)
            if got != want:
                yield Hit(s.index_map, f"index_map returns {got} block ind{'ices' if got != 1 else 'ex'} for the "
                                       f"{want}-dim block {ctx.src.segment(s.shape)}: one index per block dim is "
                                       "needed", facts={"returned": got, "block_rank": want})


@check("lint.pallas.grid-drops-remainder")
def grid_drops_remainder(ctx: PyContext):
    if ctx.divisibility_asserted:
        return
    for call in pallas_calls(ctx):
        g = call.grid
        elts = g.elts if isinstance(g, ast.Tuple) else [g] if g is not None else []
        names = _defaults(ctx, call.scope)
        for ax, e in enumerate(elts):
            if not (isinstance(e, ast.BinOp) and isinstance(e.op, ast.FloorDiv)):
                continue
            a = eval_int(ctx, e.left, call.scope, names=names)
            b = eval_int(ctx, e.right, call.scope, names=names)
            if a is not None and b and a % b == 0:
                continue
            known = a is not None and b
            yield Hit(e, f"grid axis {ax} is {ctx.src.segment(e)}: floor division drops the remainder"
                         + (f" ({a} % {b} = {a % b} rows never computed)" if known else
                            f", so a size that is not a multiple of {ctx.src.segment(e.right)} loses its last block"),
                      facts={"axis": ax, "grid": ctx.src.segment(e)}, severity="error" if known else None,
                      fix=f"use pl.cdiv({ctx.src.segment(e.left)}, {ctx.src.segment(e.right)}) (Pallas pads the last "
                          "block; mask what it computes), or assert the size is a multiple")


@check("lint.pallas.block-rank")
def block_rank(ctx: PyContext):
    for call in pallas_calls(ctx):
        for s in call.specs:
            if not isinstance(s.shape, ast.Tuple) or not s.array_shape:
                continue
            if len(s.shape.elts) != len(s.array_shape):
                yield Hit(s.node, f"block shape {ctx.src.segment(s.shape)} has {len(s.shape.elts)} dim"
                                  f"{'s' if len(s.shape.elts) != 1 else ''} for an array of shape "
                                  f"{tuple(s.array_shape)}: a block needs one size per array dim (None to squeeze)",
                          facts={"block_rank": len(s.shape.elts), "array_shape": s.array_shape})
