"""The checks of the NKI rules (their docs are in rules/nki.toml). Tile shapes are read from
nl.ndarray / nl.zeros / nl.full / nl.empty, from nl.load of a sliced or nl.arange/nl.mgrid-indexed
tensor, and from nl.tile_size constants."""
from __future__ import annotations

import ast

from diagnose.lint.pyctx import PyContext, eval_int, extent
from diagnose.lint.registry import Hit, check
from diagnose.source import python as py

NL = "neuronxcc.nki.language"
NISA = "neuronxcc.nki.isa"
_ALLOC = {f"{NL}.{n}" for n in ("ndarray", "zeros", "ones", "full", "empty", "zeros_like")}
_DT_BYTES = {"float32": 4, "fp32": 4, "int32": 4, "uint32": 4, "float16": 2, "bfloat16": 2, "fp16": 2, "bf16": 2,
             "int8": 1, "uint8": 1, "float8_e4m3": 1, "float8_e5m2": 1, "tfloat32": 4, "int16": 2}


def _canon(ctx, node):
    """nl.* names whichever way the file imported NKI (neuronxcc.nki.language or nki.language)."""
    n = ctx.name(node) or ""
    return n.replace("nki.language.", f"{NL}.", 1) if n.startswith("nki.language.") else \
        n.replace("nki.isa.", f"{NISA}.", 1) if n.startswith("nki.isa.") else n


def _kernels(ctx):
    out = []
    for fn in py.functions(ctx.tree):
        for d in py.decorator_names(fn):
            full = ctx.src.resolve(d) or ""
            if full.endswith(("nki.jit", "nki.baremetal", "nki.benchmark", "nki.simulate_kernel")) or full in ("jit",):
                out.append(fn)
                break
    return out


def _tile_consts(ctx):
    t = ctx.targets["nki"]
    return {f"{NL}.tile_size.pmax": t["pmax"], f"{NL}.tile_size.gemm_stationary_fmax": t["gemm_stationary_fmax"],
            f"{NL}.tile_size.gemm_moving_fmax": t["gemm_moving_fmax"], f"{NL}.tile_size.psum_fmax": t["psum_fmax"],
            "nki.language.tile_size.pmax": t["pmax"],
            "nki.language.tile_size.gemm_stationary_fmax": t["gemm_stationary_fmax"],
            "nki.language.tile_size.gemm_moving_fmax": t["gemm_moving_fmax"]}


def shapes(ctx, fn) -> "Shapes":
    cache = ctx.__dict__.setdefault("_nki_shapes", {})
    if fn not in cache:
        cache[fn] = Shapes(ctx, fn)
    return cache[fn]


class Shapes:
    """Tile shapes of one kernel: name -> (dims, buffer name, dtype bytes, node)."""

    def __init__(self, ctx: PyContext, fn):
        self.ctx, self.fn = ctx, fn
        self.names = _tile_consts(ctx)
        self.index_extent: dict[str, int] = {}
        self.tiles: dict[str, tuple] = {}
        assigns = py.assignments(fn)
        for n in py.nodes(fn):      # i_p, i_f = nl.mgrid[0:128, 0:512]
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple) and \
                    isinstance(n.value, ast.Subscript) and _canon(ctx, n.value.value) == f"{NL}.mgrid":
                sl = n.value.slice.elts if isinstance(n.value.slice, ast.Tuple) else [n.value.slice]
                for t, s in zip(n.targets[0].elts, sl):
                    if isinstance(t, ast.Name) and isinstance(s, ast.Slice):
                        e = extent(ctx, s.lower, s.upper, fn, self.names)
                        if e is not None:
                            self.index_extent[t.id] = e
        for name, vals in assigns.items():
            for v in vals:
                e = self._arange_extent(v)
                if e is not None:
                    self.index_extent.setdefault(name, e)
        for name, vals in assigns.items():
            for v in vals:
                t = self.tile_of(v)
                if t is not None:
                    self.tiles.setdefault(name, t)

    def value(self, node):
        return eval_int(self.ctx, node, self.fn, names=self.names)

    def _arange_extent(self, v):
        for n in py.nodes(v):
            if isinstance(n, ast.Call) and _canon(self.ctx, n.func) == f"{NL}.arange" and n.args:
                return self.value(n.args[-1]) if len(n.args) == 1 else extent(self.ctx, n.args[0], n.args[1], self.fn, self.names)
        return None

    def tile_of(self, v):
        ctx = self.ctx
        if not isinstance(v, ast.Call):
            return None
        name = _canon(ctx, v.func)
        if name in _ALLOC and name != f"{NL}.zeros_like":
            shape = py.arg(v, 0, "shape")
            if not isinstance(shape, ast.Tuple):
                return None
            dims = [self.value(e) for e in shape.elts]
            buf = py.keyword(v, "buffer")
            bufname = (_canon(ctx, buf) or "").rsplit(".", 1)[-1] if buf is not None else "sbuf"
            dt = py.keyword(v, "dtype") or (v.args[1] if len(v.args) > 1 else None)
            dts = (_canon(ctx, dt) or "").rsplit(".", 1)[-1] if dt is not None else ""
            return dims, bufname, _DT_BYTES.get(dts), v
        if name == f"{NL}.load":
            src = py.arg(v, 0, "src")
            if isinstance(src, ast.Subscript):
                idx = src.slice.elts if isinstance(src.slice, ast.Tuple) else [src.slice]
                dims = []
                for i in idx:
                    if isinstance(i, ast.Slice):
                        dims.append(extent(ctx, i.lower, i.upper, self.fn, self.names) if i.upper is not None else None)
                    else:
                        ids = py.names_in(i)
                        ext = [self.index_extent[x] for x in ids if x in self.index_extent]
                        dims.append(ext[0] if len(ext) == 1 else None)
                return dims, "sbuf", None, v
        if name == f"{NL}.matmul":
            x, y = self.tiles.get(_nm(py.arg(v, 0, "x"))), self.tiles.get(_nm(py.arg(v, 1, "y")))
            if x and y and len(x[0]) == 2 and len(y[0]) == 2:
                tx = py.literal(py.keyword(v, "transpose_x")) is True
                m = x[0][1] if tx else x[0][0]
                return [m, y[0][1]], "psum", 4, v
        return None


def _nm(node):
    return node.id if isinstance(node, ast.Name) else None


@check("lint.nki.partition-dim-over-128")
def partition_dim_over_128(ctx: PyContext):
    pmax = ctx.targets["nki"]["pmax"]
    for fn in _kernels(ctx):
        sh = shapes(ctx, fn)
        seen = set()
        for n in py.nodes(fn):
            if not isinstance(n, ast.Call):
                continue
            if _canon(ctx, n.func) == f"{NL}.matmul":
                continue        # a result tile's partition dim is the stationary free dim: matmul-free-dim says it
            t = sh.tile_of(n)
            if t is None or id(n) in seen:
                continue
            dims, buf, _, node = t
            if buf in ("shared_hbm", "hbm", "private_hbm") or not dims or not isinstance(dims[0], int):
                continue
            if dims[0] > pmax:
                seen.add(id(n))
                yield Hit(node, f"tile of shape {tuple(dims)} in {fn.name} puts {dims[0]} rows on the partition "
                                f"dim; SBUF and PSUM have {pmax} partitions: the compiler rejects it",
                          facts={"kernel": fn.name, "shape": dims, "pmax": pmax})


@check("lint.nki.matmul-free-dim")
def matmul_free_dim(ctx: PyContext):
    t = ctx.targets["nki"]
    for fn in _kernels(ctx):
        sh = shapes(ctx, fn)
        for c in py.calls(fn):
            name = _canon(ctx, c.func)
            if name == f"{NL}.matmul":
                x, y = sh.tiles.get(_nm(py.arg(c, 0, "x"))), sh.tiles.get(_nm(py.arg(c, 1, "y")))
                tx = py.literal(py.keyword(c, "transpose_x")) is True
                stat = (x[0][1] if tx else x[0][0]) if x and len(x[0]) == 2 else None
                mov = y[0][1] if y and len(y[0]) == 2 else None
            elif name == f"{NISA}.nc_matmul":
                x, y = sh.tiles.get(_nm(py.arg(c, 0, "stationary"))), sh.tiles.get(_nm(py.arg(c, 1, "moving")))
                stat = x[0][1] if x and len(x[0]) == 2 else None
                mov = y[0][1] if y and len(y[0]) == 2 else None
            else:
                continue
            if isinstance(mov, int) and mov > t["gemm_moving_fmax"]:
                yield Hit(c, f"the moving operand of this matmul in {fn.name} has a free dim of {mov}; the tensor "
                             f"engine takes at most {t['gemm_moving_fmax']}", facts={"kernel": fn.name, "moving_free": mov})
            elif isinstance(stat, int) and stat > t["gemm_stationary_fmax"]:
                yield Hit(c, f"the stationary operand of this matmul in {fn.name} has a free dim of {stat}; the "
                             f"tensor engine takes at most {t['gemm_stationary_fmax']}",
                          facts={"kernel": fn.name, "stationary_free": stat})


@check("lint.nki.psum-budget")
def psum_budget(ctx: PyContext):
    t = ctx.targets["nki"]
    bank = t["psum_fmax"] * 4
    for fn in _kernels(ctx):
        sh = shapes(ctx, fn)
        for n in py.nodes(fn):
            if not isinstance(n, ast.Call):
                continue
            tile = sh.tile_of(n)
            if tile is None or tile[1] != "psum" or _canon(ctx, n.func) == f"{NL}.matmul":
                continue
            dims, _, b, node = tile
            free = 1
            for d in dims[1:]:
                if not isinstance(d, int):
                    free = None
                    break
                free *= d
            if free is None:
                continue
            nbytes = free * (b or 4)
            if nbytes > bank:
                yield Hit(node, f"PSUM tile {tuple(dims)} in {fn.name} needs {nbytes:,} bytes per partition; one "
                                f"PSUM bank holds {bank:,} ({t['psum_fmax']} fp32): a matmul cannot accumulate into it",
                          facts={"kernel": fn.name, "bytes_per_partition": nbytes, "bank_bytes": bank})


@check("lint.nki.sbuf-budget")
def sbuf_budget(ctx: PyContext):
    t = ctx.targets["nki"]
    cap = t["sbuf_bytes_per_partition"]
    for fn in _kernels(ctx):
        sh = shapes(ctx, fn)
        for n in py.nodes(fn):
            if not isinstance(n, ast.Call) or _canon(ctx, n.func) not in _ALLOC:
                continue
            tile = sh.tile_of(n)
            if tile is None or tile[1] != "sbuf":
                continue
            dims, _, b, node = tile
            if b is None or any(not isinstance(d, int) for d in dims[1:]):
                continue
            free = 1
            for d in dims[1:]:
                free *= d
            if free * b > cap:
                yield Hit(node, f"SBUF tile {tuple(dims)} in {fn.name} needs {free * b:,} bytes per partition; "
                                f"SBUF has {cap:,} per partition", facts={"kernel": fn.name,
                                "bytes_per_partition": free * b, "capacity": cap})
