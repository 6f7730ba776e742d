"""What the Python rules share about one file: its frameworks, its kernels, the data flow of each
kernel (which names are tiles of program ids or loop counters), its launches and their constants."""
from __future__ import annotations

import ast
from functools import cached_property

from diagnose.source import python as py

TL = "triton.language"
_CLAMPS = {f"{TL}.{n}" for n in ("minimum", "maximum", "where", "load", "clamp", "umulhi")}
_PASS = {f"{TL}.{n}" for n in ("multiple_of", "max_contiguous", "max_constancy", "cast")}


class PyContext:
    def __init__(self, src: py.PySource, target: str, tinfo: dict, all_targets: dict):
        self.src, self.target, self.tinfo, self.targets = src, target, tinfo, all_targets
        self.tree = src.tree

    # ---- what the file is -------------------------------------------------------------------
    @cached_property
    def frameworks(self) -> set[str]:
        mods = set(self.src.aliases.values())
        for n in py.nodes(self.tree):
            if isinstance(n, ast.ImportFrom) and n.module:
                mods.add(n.module)
        out = set()
        if any(m == "triton" or m.startswith("triton.") for m in mods):
            out.add("triton")
        if any(m.startswith("jax.experimental.pallas") for m in mods):
            out.add("pallas")
        if any(m.startswith(("neuronxcc.nki", "nki")) for m in mods):
            out.add("nki")
        return out

    def name(self, node) -> str | None:
        """The canonical dotted name of a Name/Attribute/Call (aliases resolved)."""
        return self.src.resolve(py.dotted(node))

    def is_call(self, node, *names) -> bool:
        return isinstance(node, ast.Call) and self.name(node.func) in names

    @cached_property
    def module_consts(self) -> dict:
        """Module-level NAME = literal."""
        out = {}
        for n in self.tree.body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                v = py.literal(n.value)
                if v is not None:
                    out[n.targets[0].id] = v
        return out

    def const(self, node, scope=None):
        """A node's value when it is a literal, or a name bound to a literal (in scope, then the
        module), or arithmetic of those; else None."""
        v = py.literal(node)
        if v is not None:
            return v
        if isinstance(node, ast.Name):
            if scope is not None:
                vals = py.assignments(scope).get(node.id, [])
                if len(vals) == 1:
                    return self.const(vals[0], None)
                if vals:
                    return None
            return self.module_consts.get(node.id)
        if isinstance(node, ast.BinOp):
            a, b = self.const(node.left, scope), self.const(node.right, scope)
            if isinstance(a, int) and isinstance(b, int):
                try:
                    return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b,
                            ast.FloorDiv: a // b if b else None, ast.Mod: a % b if b else None,
                            ast.LShift: a << b if 0 <= b < 64 else None}.get(type(node.op))
                except (ValueError, OverflowError):
                    return None
        if isinstance(node, ast.Tuple):
            vals = [self.const(e, scope) for e in node.elts]
            return tuple(vals) if all(v is not None for v in vals) else None
        return None

    # ---- facts that hold for the whole file --------------------------------------------------
    @cached_property
    def divisibility_asserted(self) -> bool:
        """An `assert a % b == 0` (or tl.static_assert / tl.device_assert / tl.assume / torch._check of
        one), or a `tl.multiple_of(size, B)` on a name that is not an offset: the author guarantees
        that sizes are multiples of the block."""
        def mod_zero(test) -> bool:
            return any(isinstance(c, ast.Compare) and isinstance(c.left, ast.BinOp) and isinstance(c.left.op, ast.Mod)
                       and any(py.literal(x) == 0 for x in c.comparators) for c in py.nodes(test))
        for n in py.nodes(self.tree):
            if isinstance(n, ast.Assert) and mod_zero(n.test):
                return True
            if isinstance(n, ast.Call) and n.args and (self.name(n.func) or "").rsplit(".", 1)[-1] in (
                    "static_assert", "device_assert", "assume", "_check") and mod_zero(n.args[0]):
                return True
        return False

    @cached_property
    def host_text_names(self) -> set[str]:
        """Every dotted name the file mentions (host code included): `torch.float32`, `torch.equal`..."""
        out = set()
        for n in py.nodes(self.tree):
            if isinstance(n, (ast.Attribute, ast.Name)):
                d = self.name(n)
                if d:
                    out.add(d)
        return out

    # ---- Triton ------------------------------------------------------------------------------
    @cached_property
    def triton_kernels(self) -> list[ast.FunctionDef]:
        return py.jit_functions(self.tree, ("triton.jit",), self.src)

    def flow(self, fn) -> "KernelFlow":
        cache = self.__dict__.setdefault("_flows", {})
        if fn not in cache:
            cache[fn] = KernelFlow(self, fn)
        return cache[fn]

    @cached_property
    def launches(self) -> dict[str, list[ast.Call]]:
        """kernel name -> its `kernel[grid](...)` calls in the file."""
        names = {fn.name for fn in self.triton_kernels}
        out: dict[str, list] = {}
        for n in py.nodes(self.tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and isinstance(n.func.value, ast.Name) \
                    and n.func.value.id in names:
                out.setdefault(n.func.value.id, []).append(n)
        for v in out.values():
            v.sort(key=lambda c: (c.lineno, c.col_offset))
        return out

    def enclosing_function(self, node):
        for a in self.src.ancestors(node):
            if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return a
        return None

    def grid_rank(self, launch: ast.Call) -> int | None:
        """The number of axes a launch's grid sizes: a tuple literal, a lambda/def returning one,
        or a name bound to either; None when it cannot be seen."""
        g = launch.func.slice
        return self._rank(g, self.enclosing_function(launch), depth=0)

    def _rank(self, g, scope, depth):
        if depth > 4:
            return None
        if isinstance(g, ast.Tuple):
            return len(g.elts)
        if isinstance(g, (ast.Constant, ast.BinOp)) or self.is_call(g, "triton.cdiv"):
            return 1
        if isinstance(g, ast.Lambda):
            return self._rank(g.body, None, depth + 1)
        if isinstance(g, ast.Name):
            vals = py.assignments(scope).get(g.id, []) if scope is not None else []
            if not vals:
                for n in self.tree.body:
                    if isinstance(n, ast.FunctionDef) and n.name == g.id:
                        rets = [r.value for r in py.nodes(n) if isinstance(r, ast.Return) and r.value is not None]
                        ranks = {self._rank(r, n, depth + 1) for r in rets}
                        return ranks.pop() if len(ranks) == 1 else None
                    if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == g.id for t in n.targets):
                        vals = [n.value]
            if scope is not None:
                for n in py.nodes(scope):    # a nested `def grid(meta): return (...)`
                    if isinstance(n, ast.FunctionDef) and n.name == g.id and n is not scope:
                        rets = [r.value for r in py.nodes(n) if isinstance(r, ast.Return) and r.value is not None]
                        ranks = {self._rank(r, n, depth + 1) for r in rets}
                        return ranks.pop() if len(ranks) == 1 else None
            ranks = {self._rank(v, scope, depth + 1) for v in vals}
            return ranks.pop() if len(ranks) == 1 else None
        return None

    def configs(self, fn) -> list[dict]:
        """The constexpr settings a kernel is compiled with, each {name: value, ..., '_node': node}:
        its `triton.autotune` configs and the literal keyword arguments of its launches."""
        out = []
        for d in fn.decorator_list:
            if isinstance(d, ast.Call) and self.name(d.func) == "triton.autotune":
                cfgs = py.keyword(d, "configs") or (d.args[0] if d.args else None)
                if isinstance(cfgs, ast.Name):
                    for n in self.tree.body:
                        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == cfgs.id for t in n.targets):
                            cfgs = n.value
                if isinstance(cfgs, (ast.List, ast.Tuple)):
                    for c in cfgs.elts:
                        if self.is_call(c, "triton.Config") and c.args and isinstance(c.args[0], ast.Dict):
                            vals = {"_node": c, "_autotune": True}
                            for k, v in zip(c.args[0].keys, c.args[0].values):
                                kk, vv = py.literal(k), self.const(v)
                                if isinstance(kk, str) and vv is not None:
                                    vals[kk] = vv
                            for kw in c.keywords:
                                vv = self.const(kw.value)
                                if kw.arg and vv is not None:
                                    vals[kw.arg] = vv
                            out.append(vals)
        for call in self.launches.get(fn.name, []):
            scope = self.enclosing_function(call)
            vals = {"_node": call, "_autotune": False}
            for kw in call.keywords:
                vv = self.const(kw.value, scope)
                if kw.arg and vv is not None:
                    vals[kw.arg] = vv
            ps = py.params(fn)
            for i, a in enumerate(call.args):
                if i < len(ps):
                    vv = self.const(a, scope)
                    if vv is not None:
                        vals.setdefault(ps[i], vv)
            out.append(vals)
        return out


class KernelFlow:
    """Which names of a Triton kernel hold what: 'arange' (built from tl.arange), 'moving' (from
    tl.program_id, a loop counter, or advanced inside a loop), 'tiled' (both: a tile's offsets that
    can run past the end), 'blockptr' (tl.make_block_ptr / tl.advance), 'pid' (from tl.program_id)."""

    def __init__(self, ctx: PyContext, fn):
        self.ctx, self.fn = ctx, fn
        self.assigns = py.assignments(fn)
        self.constexprs = py.constexpr_params(fn)
        self.params = py.params(fn)
        self.env: dict[str, set] = {}
        for n in py.nodes(fn):
            if isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name):
                self.env[n.target.id] = {"moving"}
        in_loop = set()
        for loop in py.nodes(fn):
            if isinstance(loop, (ast.For, ast.While)):
                for n in py.nodes(loop):
                    if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                        in_loop.add(n.target.id)
        self.loop_advanced = in_loop
        for _ in range(8):
            changed = False
            for name, vals in self.assigns.items():
                k = set(self.env.get(name, set()))
                for v in vals:
                    k |= self.kinds(v)
                if name in in_loop:
                    k.add("moving")
                k = _close(k)
                if k != self.env.get(name):
                    self.env[name] = k
                    changed = True
            if not changed:
                break

    def kinds(self, e) -> set:
        ctx = self.ctx
        if isinstance(e, ast.Name):
            return set(self.env.get(e.id, ()))
        if isinstance(e, ast.Call):
            name = ctx.name(e.func)
            if name == f"{TL}.program_id":
                return {"moving", "pid"}
            if name == f"{TL}.arange":
                return {"arange"}
            if name in (f"{TL}.make_block_ptr", f"{TL}.advance"):
                return {"blockptr"}
            if name in _PASS and e.args:
                return self.kinds(e.args[0])
            if name in _CLAMPS:
                return set()
            if isinstance(e.func, ast.Attribute) and e.func.attr in ("to", "cast"):   # x.to(tl.int64)
                k = self.kinds(e.func.value)
                if any("int64" in (ctx.name(a) or "") for a in e.args):
                    k = k | {"int64"}
                return k
            return set()
        if isinstance(e, ast.BinOp):
            if isinstance(e.op, ast.Mod):
                return set()
            return _close(self.kinds(e.left) | self.kinds(e.right))
        if isinstance(e, ast.Subscript):
            return self.kinds(e.value)
        if isinstance(e, ast.UnaryOp):
            return self.kinds(e.operand)
        if isinstance(e, ast.IfExp):
            return self.kinds(e.body) | self.kinds(e.orelse)
        return set()

    def expand(self, e, depth=0) -> list[ast.AST]:
        """e and, transitively, the values of the names it reads (to find arange extents)."""
        out, todo, seen = [], [e], set()
        while todo and len(out) < 200:
            n = todo.pop()
            out.append(n)
            for name in py.names_in(n):
                if name not in seen:
                    seen.add(name)
                    todo.extend(self.assigns.get(name, []))
        return out

    def arange_extents(self, e) -> list[str]:
        """The block sizes of the tl.arange calls an expression is built from (their source text)."""
        out = []
        for n in self.expand(e):
            for c in py.nodes(n):
                if self.ctx.is_call(c, f"{TL}.arange") and len(c.args) == 2:
                    s = self.ctx.src.segment(c.args[1])
                    if s and s not in out:
                        out.append(s)
        return out

    def guarded_by_if(self, node, names: set[str]) -> bool:
        """node sits under an `if` (or its else) whose test reads a constexpr parameter (the
        EVEN_K pattern of heuristics) or one of names (a full-tile fast path)."""
        for a in self.ctx.src.ancestors(node):
            if a is self.fn:
                break
            if isinstance(a, (ast.If, ast.IfExp, ast.While)):
                used = py.names_in(a.test)
                if used & self.constexprs or used & names:
                    return True
        return False


def _close(k: set) -> set:
    if "arange" in k and "moving" in k:
        k = k | {"tiled"}
    return k


_BIN = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b if b else None, ast.Mod: lambda a, b: a % b if b else None,
        ast.LShift: lambda a, b: a << b if 0 <= b < 64 else None, ast.RShift: lambda a, b: a >> b if 0 <= b < 64 else None}


def eval_int(ctx: PyContext, node, scope=None, unknown: int | None = None, names: dict | None = None, depth=0):
    """An integer expression's value: literals, names bound once to one (in scope or the module, or
    given in names), + - * // % << >>. Names with no value take `unknown` when it is given (to
    compute a difference like (k + 1) * T - k * T), else the result is None."""
    if node is None or depth > 30:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = eval_int(ctx, node.operand, scope, unknown, names, depth + 1)
        return -v if v is not None else None
    if isinstance(node, (ast.Name, ast.Attribute)):
        d = ctx.name(node)
        if names and d in names:
            return names[d]
        if isinstance(node, ast.Name) and scope is not None:
            vals = py.assignments(scope).get(node.id, [])
            if len(vals) == 1:
                v = eval_int(ctx, vals[0], scope, unknown, names, depth + 1)
                if v is not None:
                    return v
            elif vals:
                return unknown
        if isinstance(node, ast.Name) and node.id in ctx.module_consts and isinstance(ctx.module_consts[node.id], int):
            return ctx.module_consts[node.id]
        return unknown
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        a = eval_int(ctx, node.left, scope, unknown, names, depth + 1)
        b = eval_int(ctx, node.right, scope, unknown, names, depth + 1)
        if a is None or b is None:
            return None
        try:
            return _BIN[type(node.op)](a, b)
        except (ValueError, OverflowError):
            return None
    return None


def extent(ctx: PyContext, lo, hi, scope=None, names=None):
    """hi - lo when it is the same whatever the unknown names are (tried with 0, 1 and 7)."""
    vals = set()
    for u in (0, 1, 7):
        a = eval_int(ctx, lo, scope, u, names) if lo is not None else 0
        b = eval_int(ctx, hi, scope, u, names)
        if a is None or b is None:
            return None
        vals.add(b - a)
    return vals.pop() if len(vals) == 1 else None
