"""What a Python benchmark script times: its timed regions, the sides compared, the tensors they get.

The facts here are read from the syntax tree (diagnose.source.python), never by running the script:

- a `Region` is a stretch of code a timer measures: statements between two host-timer reads
  (time.perf_counter, time.time, ...), between two `Event.record()` calls, or the callable given to a
  harness (triton.testing.do_bench, torch.utils.benchmark.Timer, timeit.timeit);
- a `Side` is one thing being timed (`candidate(a, b)`): a call inside a region, or the call site of a
  local bench helper whose timed call is one of its parameters (`bench(candidate, a, b)`);
- `describe(expr)` follows an argument back to where it was made (`torch.randn(4096, 4096,
  dtype=torch.float16, device="cuda").t()`) and says its dtype, device, shape, layout and whether it
  is trivial data (zeros, ones, empty, sorted).

The rule checks (diagnose/timing/checks.py) are pure functions of these facts.
"""
from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field

from diagnose.devices import DeviceError, normalise_dtype
from diagnose.source.python import PySource, dotted

HOST_TIMERS = {"time.time", "time.perf_counter", "time.perf_counter_ns", "time.monotonic", "time.monotonic_ns",
               "time.time_ns", "time.process_time", "timeit.default_timer"}
EVENT_CTORS = {"torch.cuda.Event", "torch.Event", "cupy.cuda.Event", "torch.xpu.Event", "torch.mps.Event"}
HARNESSES = {"triton.testing.do_bench": "do_bench", "triton.testing.do_bench_cudagraph": "do_bench",
             "torch.utils.benchmark.Timer": "torch_timer", "torch.utils.benchmark.utils.timer.Timer": "torch_timer",
             "timeit.timeit": "timeit", "timeit.repeat": "timeit", "timeit.Timer": "timeit",
             "torch._inductor.utils.do_bench_using_profiling": "do_bench"}
# what each harness does for the user (triton's do_bench: synchronises, warms up, flushes L2, repeats)
HARNESS_DOES = {"do_bench": {"sync", "warmup", "flush", "reps", "spread"},
                "torch_timer": {"sync", "warmup", "reps", "spread"},
                "timeit": {"reps"}}
# calls inside a region that are bookkeeping, not the work being timed
NOT_WORK = {"print", "len", "range", "enumerate", "zip", "list", "dict", "tuple", "float", "int", "str", "min", "max",
            "sum", "sorted", "abs", "round", "isinstance", "format"}
NOT_WORK_METHODS = {"append", "extend", "record", "synchronize", "elapsed_time", "format", "item", "block_until_ready",
                    "cpu", "numpy", "tolist", "zero_", "fill_", "wait", "set_description", "update", "write"}

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.Div: operator.truediv}

_DEFAULT_BYTES = 4      # torch/numpy default float32
_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}


def name_of(src: PySource, func) -> str:
    """The canonical dotted name of a callee (imports resolved); `kernel[grid](...)` gives `kernel`."""
    if isinstance(func, ast.Subscript):
        func = func.value
    d = dotted(func)
    return (src.resolve(d) or "") if d else ""


def segment(src: PySource, node) -> str:
    """The source text of a node, from the file's lines (ast.get_source_segment re-splits the whole file
    on every call: that cost most of the read on large files)."""
    try:
        l0, l1, c0, c1 = node.lineno, node.end_lineno, node.col_offset, node.end_col_offset
    except AttributeError:
        return ""
    if l1 is None or c1 is None:
        return ""
    if l0 == l1:
        return src.line(l0).encode("utf-8")[c0:c1].decode("utf-8", "replace")
    parts = [src.line(l0).encode("utf-8")[c0:].decode("utf-8", "replace")]
    parts += [src.line(n) for n in range(l0 + 1, l1)]
    parts.append(src.line(l1).encode("utf-8")[:c1].decode("utf-8", "replace"))
    return "\n".join(parts)


def method_of(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else ""


@dataclass
class Region:
    kind: str                       # host | event | do_bench | torch_timer | timeit
    start: ast.AST                  # the node that starts it (timer read, record(), harness call)
    stop: ast.AST | None
    body: list                      # statements (or one expression) measured
    scope: ast.AST                  # the function (or module) it lives in
    stmt_list: list = field(default_factory=list)   # the statement list start/stop belong to
    harness_call: ast.Call | None = None
    reps: int | None = None         # repetitions measured, where known (loop count, number=)
    reps_known: bool = False

    @property
    def line(self) -> int:
        return getattr(self.start, "lineno", 1)

    @property
    def end_line(self) -> int:
        n = self.stop if self.stop is not None else self.start
        return getattr(n, "end_lineno", None) or getattr(n, "lineno", 1)

    def does(self, what: str) -> bool:
        return what in HARNESS_DOES.get(self.kind, set())

    def calls(self) -> list[ast.Call]:
        out = []
        for st in self.body:
            out.extend(n for n in ast.walk(st) if isinstance(n, ast.Call))
        out.sort(key=lambda n: (n.lineno, n.col_offset))
        return out


@dataclass
class Side:
    fn: str                          # what is timed, as named at the call site
    args: list
    kwargs: dict
    node: ast.AST                    # the call (or call site of the bench helper)
    region: Region
    scope: ast.AST                   # where its argument names are resolved
    shown: str = ""                  # the call as the script writes it: `reference(x.double(), s)`

    @property
    def label(self) -> str:
        """What a reviewer reads: the call as written (not a resolved module path), at most 40 characters."""
        text = " ".join((self.shown or self.fn).split())
        return text if len(text) <= 40 else text[:39] + "…"


@dataclass
class Tensor:
    ctor: str = ""                   # torch.randn, torch.zeros, ...
    dtype: str | None = None
    device: str | None = None
    shape: tuple | None = None
    layout: str | None = None        # transposed | channels_last | None
    trivial: str | None = None       # zeros | ones | constant | empty | sorted
    node: ast.AST | None = None
    dtype_default: bool = False      # dtype is the library's default (no dtype= given), not written

    def nbytes(self) -> int | None:
        if self.shape is None:
            return None
        n = 1
        for d in self.shape:
            n *= d
        return n * _BYTES.get(self.dtype or "", _DEFAULT_BYTES)


class Script:
    """One parsed benchmark script and what it times."""

    def __init__(self, src: PySource, params: dict):
        self.src = src
        self.params = params
        self.tree = src.tree
        # one walk of the tree: every node, its parent (the checks look nodes up here, never re-walk)
        self.nodes, self.parents = [], {}
        stack = [self.tree]
        while stack:
            n = stack.pop()
            self.nodes.append(n)
            for c in ast.iter_child_nodes(n):
                self.parents[c] = n
                stack.append(c)
        self.funcs = {f.name: f for f in self.nodes if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._assign = {}
        self._names: dict = {}
        self._work: dict = {}
        self.events = set()
        self.all_calls = sorted((n for n in self.nodes if isinstance(n, ast.Call)),
                                key=lambda n: (n.lineno, n.col_offset))
        self.calls_by_name: dict = {}
        for c in self.all_calls:
            self.calls_by_name.setdefault(self.name(c), []).append(c)
        self.events = self._event_names()
        # statements that contain a host-timer read / an event record(), found once from the calls up
        self._timer_in, self._record_in = set(), {}
        for c in self.all_calls:
            if self.name(c) in HOST_TIMERS:
                self._timer_in |= {id(a) for a in self._up(c)}
            elif method_of(c.func) == "record":
                ev = self._event_of(c)
                if ev:
                    for a in self._up(c):
                        self._record_in.setdefault(id(a), ev)
        text = src.text
        imports = set(src.aliases.values())
        tops = {i.split(".")[0] for i in imports}
        self.uses_gpu = bool(tops & {"triton", "jax", "cupy", "pycuda", "numba", "tensorflow", "cuda"}) or (
            "torch" in tops and ("cuda" in text or "xpu" in text or "mps" in text))
        setters = set(params.get("default_dtype_setters", ()))
        self.default_dtype_changed = any(n in setters for n in self.calls_by_name)
        self.default_device_changed = any(n in set(params.get("default_device_setters", ()))
                                          for n in self.calls_by_name)
        self.regions = self._regions()
        self.sides = self._sides()

    # ------------------------------------------------------------------ helpers
    def name(self, call: ast.Call) -> str:
        key = id(call)
        got = self._names.get(key)
        if got is None:
            got = self._names[key] = name_of(self.src, call.func)
        return got

    def scope_of(self, node) -> ast.AST:
        p = self.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module, ast.Lambda)):
            p = self.parents.get(p)
        if isinstance(p, ast.Lambda):
            return self.scope_of(p)
        return p if p is not None else self.tree

    def enclosing(self, node, types):
        p = self.parents.get(node)
        while p is not None:
            if isinstance(p, types):
                return p
            p = self.parents.get(p)
        return None

    def assignments(self, scope) -> dict:
        """name -> [(line, value)] of plain assignments directly in scope (not in nested functions)."""
        if scope in self._assign:
            return self._assign[scope]
        out: dict = {}
        stack = list(ast.iter_child_nodes(scope))
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        out.setdefault(t.id, []).append((n.lineno, n.value))
                    elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(n.value, (ast.Tuple, ast.List)) \
                            and len(t.elts) == len(n.value.elts):
                        for a, v in zip(t.elts, n.value.elts):
                            if isinstance(a, ast.Name):
                                out.setdefault(a.id, []).append((n.lineno, v))
            elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value is not None:
                out.setdefault(n.target.id, []).append((n.lineno, n.value))
            stack.extend(ast.iter_child_nodes(n))
        for v in out.values():
            v.sort(key=lambda x: x[0])
        self._assign[scope] = out
        return out

    def value_of(self, name: str, scope, before: int | None = None):
        """The expression last assigned to name before a line, in scope or else at module level."""
        for sc in (scope, self.tree) if scope is not self.tree else (self.tree,):
            vals = self.assignments(sc).get(name)
            if vals:
                cands = [v for ln, v in vals if before is None or ln <= before or sc is not scope]
                if cands:
                    return cands[-1]
            if isinstance(sc, (ast.FunctionDef, ast.AsyncFunctionDef)):
                # a parameter: its default (call sites that pass another value are not followed)
                a = sc.args
                pos = a.posonlyargs + a.args
                for arg, default in zip(pos[len(pos) - len(a.defaults):], a.defaults):
                    if arg.arg == name:
                        return default
                for arg, default in zip(a.kwonlyargs, a.kw_defaults):
                    if arg.arg == name and default is not None:
                        return default
                if name in {x.arg for x in pos + a.kwonlyargs}:
                    return None
        return None

    def const_int(self, node, scope, depth: int = 0):
        if depth > 8 or node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return int(node.value) if float(node.value).is_integer() else None
        if isinstance(node, ast.Name):
            return self.const_int(self.value_of(node.id, scope), scope, depth + 1)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            a, b = self.const_int(node.left, scope, depth + 1), self.const_int(node.right, scope, depth + 1)
            if a is None or b is None:
                return None
            try:
                v = _BINOPS[type(node.op)](a, b)
            except (ZeroDivisionError, OverflowError, ValueError):
                return None
            return int(v) if float(v).is_integer() and abs(v) < 1 << 62 else None
        if isinstance(node, ast.Call) and self.name(node) == "int" and node.args:
            return self.const_int(node.args[0], scope, depth + 1)
        return None

    def _event_names(self) -> set:
        out = set()
        # start = Event(...), [torch.cuda.Event(enable_timing=True) for _ in range(n)] and start, end = Event(), Event()
        for c in self.all_calls:
            if self.name(c) not in EVENT_CTORS:
                continue
            a = self.parents.get(c)
            while a is not None and not isinstance(a, (ast.stmt, ast.Module)):
                a = self.parents.get(a)
            if isinstance(a, ast.Assign):
                for t in a.targets:
                    out |= {x.id for x in ast.walk(t) if isinstance(x, ast.Name)}
        return out

    # ------------------------------------------------------------------ regions
    def _up(self, node):
        p = self.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module, ast.Lambda)):
            yield p
            p = self.parents.get(p)

    def _event_of(self, c: ast.Call):
        base = c.func.value
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Name) and (base.id in self.events or "event" in base.id.lower()
                                           or base.id.lower() in {"start", "end", "stop", "begin"}):
            return base.id
        return None

    def _timer_stmt(self, st) -> bool:
        return id(st) in self._timer_in

    def _record_stmt(self, st):
        """The event name whose .record() the statement calls, if any."""
        return self._record_in.get(id(st))

    def _stmt_lists(self):
        for n in self.nodes:
            for fld in ("body", "orelse", "finalbody"):
                lst = getattr(n, fld, None)
                if isinstance(lst, list) and lst and isinstance(lst[0], ast.stmt):
                    yield n, lst

    def _regions(self) -> list[Region]:
        regions = []
        for owner, lst in self._stmt_lists():
            scope = owner if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) \
                else self.scope_of(owner)
            i = 0
            while i < len(lst):
                st = lst[i]
                if self._timer_stmt(st) and not isinstance(st, (ast.For, ast.While, ast.With, ast.If, ast.Try,
                                                                 ast.FunctionDef)):
                    j = next((k for k in range(i + 1, len(lst)) if self._timer_stmt(lst[k])
                              and not isinstance(lst[k], (ast.For, ast.While, ast.With, ast.If, ast.Try,
                                                          ast.FunctionDef))), None)
                    if j is not None:
                        regions.append(Region("host", st, lst[j], lst[i + 1:j], scope, lst))
                        i = j + 1
                        continue
                ev = self._record_stmt(st) if not isinstance(st, (ast.For, ast.While, ast.With, ast.If)) else None
                if ev:
                    j = next((k for k in range(i + 1, len(lst))
                              if not isinstance(lst[k], (ast.For, ast.While, ast.With, ast.If))
                              and self._record_stmt(lst[k]) not in (None, ev)), None)
                    if j is not None:
                        regions.append(Region("event", st, lst[j], lst[i + 1:j], scope, lst))
                        i = j + 1
                        continue
                i += 1
        for call in self.all_calls:
            kind = HARNESSES.get(self.name(call))
            if kind is None:
                continue
            scope = self.scope_of(call)
            body = []
            fn = call.args[0] if call.args else None
            for k in call.keywords:
                if k.arg in ("fn", "stmt"):
                    fn = k.value
            if isinstance(fn, ast.Lambda):
                body = [fn.body]
            elif isinstance(fn, ast.Constant) and isinstance(fn.value, str):
                try:
                    body = [s for s in ast.parse(fn.value).body]
                    for s in body:      # line numbers of the call, for evidence
                        for n in ast.walk(s):
                            if hasattr(n, "lineno"):
                                n.lineno, n.col_offset = call.lineno, call.col_offset
                                n.end_lineno = call.end_lineno
                except SyntaxError:
                    body = []
            elif fn is not None:
                body = [ast.Expr(value=ast.Call(func=fn, args=[], keywords=[], lineno=call.lineno,
                                                col_offset=call.col_offset), lineno=call.lineno,
                                 col_offset=call.col_offset)]
                ast.fix_missing_locations(body[0])
            r = Region(kind, call, None, body, scope, harness_call=call)
            if kind == "timeit":
                num = next((k.value for k in call.keywords if k.arg == "number"), None)
                r.reps = self.const_int(num, scope) if num is not None else 1_000_000
                r.reps_known = r.reps is not None
            regions.append(r)
        for r in regions:
            if r.kind in ("host", "event"):
                r.reps, r.reps_known = self._reps(r)
        regions.sort(key=lambda r: (r.line, r.kind))
        return regions

    def _reps(self, r: Region):
        """Repetitions of a host/event region: a loop inside it, or a loop around it."""
        for st in r.body:
            if isinstance(st, ast.For):
                n = self._loop_count(st, r.scope)
                return n, n is not None
            if isinstance(st, ast.While):
                return None, False
        loop = self.enclosing(r.start, (ast.For, ast.While, ast.comprehension))
        if loop is not None and self.enclosing(loop, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) \
                is self.enclosing(r.start, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            if isinstance(loop, ast.For):
                n = self._loop_count(loop, r.scope)
                return n, n is not None
            return None, False
        return 1, True

    def _loop_count(self, loop: ast.For, scope):
        it = loop.iter
        if isinstance(it, ast.Call) and self.name(it) == "range" and it.args:
            if len(it.args) == 1:
                return self.const_int(it.args[0], scope)
            a, b = self.const_int(it.args[0], scope), self.const_int(it.args[1], scope)
            return (b - a) if a is not None and b is not None else None
        return None

    # ------------------------------------------------------------------ sides
    def work_calls(self, r: Region) -> list[ast.Call]:
        """Calls in a region that are the timed work (not timers, syncs, bookkeeping)."""
        cached = self._work.get(id(r))
        if cached is not None:
            return cached
        out = self._work[id(r)] = []
        inner = set()
        for c in r.calls():
            if id(c) in inner:
                continue
            nm = self.name(c)
            if nm in HOST_TIMERS or nm in NOT_WORK or nm in self.params.get("syncs", ()) or method_of(c.func) in \
                    NOT_WORK_METHODS or nm in self.params.get("alloc_calls", ()):
                continue
            if any(nm == x or nm.startswith(x + ".") for x in ("torch.cuda", "os", "sys", "logging", "math",
                                                                 "statistics", "np.random", "numpy.random")):
                continue
            out.append(c)
            inner |= {id(a) for a in ast.walk(c) if a is not c}     # f(g(x)): g is an argument of the work
        return out

    def _sides(self) -> list[Side]:
        sides = []
        for r in self.regions:
            for c in self.work_calls(r):
                fn = name_of(self.src, c.func) or segment(self.src, c.func)
                params = _params(r.scope) if isinstance(r.scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
                base = fn.split(".")[0]
                if base in params and isinstance(r.scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    # a bench helper: the timed thing is a parameter; every call site is a side
                    for site in self._call_sites(r.scope.name):
                        bound = _bind(site, params)
                        target = bound.get(base)
                        if target is None:
                            continue
                        rest = [v for k, v in bound.items() if k != base and not k.startswith("*")]
                        star = bound.get("*args") or []
                        if isinstance(target, ast.Lambda) and not _params(target) and isinstance(target.body,
                                                                                                  ast.Call):
                            # bench(lambda: softmax(x)): the side is the call the lambda makes
                            inner = target.body
                            sides.append(Side(name_of(self.src, inner.func) or segment(self.src, inner.func),
                                              list(inner.args), {k.arg: k.value for k in inner.keywords if k.arg},
                                              site, r, self.scope_of(site), segment(self.src, inner)))
                            continue
                        label = segment(self.src, target) or "?"
                        shown = f"{label}({', '.join(segment(self.src, a) for a in rest + list(star))})"
                        sides.append(Side(label, rest + list(star), {}, site, r, self.scope_of(site), shown))
                else:
                    sides.append(Side(fn, list(c.args), {k.arg: k.value for k in c.keywords if k.arg}, c, r, r.scope,
                                      segment(self.src, c)))
        return sides

    # ------------------------------------------------------------------ GPU evidence
    _GPU_DEVICES = ("cuda", "xpu", "hip", "mps", "xla")

    def _gpu_value(self, expr, scope) -> bool:
        t = self.describe(expr, scope)
        return t.device in self._GPU_DEVICES or t.ctor.startswith(("jax.", "jnp.", "cupy.", "cp."))

    def launches_gpu_work(self, r: Region, depth: int = 0) -> bool:
        """Whether a region's work is evidently device work: device tensors as arguments, a kernel
        launch (`kernel[grid](...)`, a function of a GPU compiler: triton.jit, numba.cuda.jit), a module
        moved to the device, or a local function that does one of these. Host work (compiling, file I/O, logging) gives False."""
        # only a GPU compiler is evidence by itself: torch.compile, jax.jit and numba.jit also run on the CPU
        jit = set(self.params.get("gpu_jit", ()))
        calls = self.work_calls(r) if depth == 0 else r
        for c in calls:
            if isinstance(c.func, ast.Subscript):
                return True                                  # triton-style launch: kernel[grid](...)
            args = list(c.args) + [k.value for k in c.keywords]
            if any(not isinstance(a, ast.Starred) and self._gpu_value(a, self.scope_of(c)) for a in args):
                return True
            base = c.func
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                if self._gpu_value(base, self.scope_of(c)):
                    return True                              # model(x) with model = Net().cuda()
                v = self.value_of(base.id, self.scope_of(c))
                if isinstance(v, ast.Call) and self.name(v) in jit:
                    return True
                fn = self.funcs.get(base.id)
                if fn is not None:
                    if any(self.src.resolve(ast.unparse(d.func if isinstance(d, ast.Call) else d)) in jit
                           for d in fn.decorator_list):
                        return True
                    if depth < 2:
                        inner = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
                        if self.launches_gpu_work(inner, depth + 1):
                            return True
        if depth == 0:
            for side in (x for x in self.sides if x.region is r):
                if any(self._gpu_value(a, side.scope) for a in side.args if not isinstance(a, ast.Starred)):
                    return True
                tgt = side.fn.split("(")[0]
                fn = self.funcs.get(tgt)
                v = self.value_of(tgt, side.scope) if tgt.isidentifier() else None
                if isinstance(v, ast.Call) and self.name(v) in jit:
                    return True
                if fn is not None and self.launches_gpu_work([n for n in ast.walk(fn) if isinstance(n, ast.Call)], 1):
                    return True
        return False

    def _call_sites(self, fname: str) -> list[ast.Call]:
        return sorted((n for n in self.all_calls if isinstance(n.func, ast.Name)
                       and n.func.id == fname), key=lambda n: (n.lineno, n.col_offset))

    # ------------------------------------------------------------------ tensors
    def describe(self, expr, scope, depth: int = 0) -> Tensor:
        """Where an argument tensor came from: dtype, device, shape, layout, trivial data."""
        if depth > 8 or expr is None:
            return Tensor()
        if isinstance(expr, ast.Name):
            v = self.value_of(expr.id, scope, getattr(expr, "lineno", None))
            return self.describe(v, scope, depth + 1) if v is not None else Tensor()
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT", "mH", "H"):
            t = self.describe(expr.value, scope, depth + 1)
            t.layout = "transposed"
            return t
        if not isinstance(expr, ast.Call):
            return Tensor()
        nm = self.name(expr)
        meth = method_of(expr.func)
        p = self.params
        short = nm.split(".")[-1] if nm else meth
        is_ctor = nm in p.get("constructors", ()) or (
            short in p.get("constructor_names", ()) and nm.split(".")[0] in ("torch", "numpy", "np", "jax", "jnp",
                                                                            "cupy", "cp", "jax.numpy", "torch.cuda"))
        if nm.startswith(("numpy.random", "jax.random", "cupy.random", "torch.random")) and short not in ("seed",):
            is_ctor = True
        if is_ctor and not (meth and nm.split(".")[0] not in ("torch", "numpy", "np", "jax", "jnp", "cupy", "cp")):
            t = Tensor(ctor=nm, node=expr)
            t.dtype = self._dtype(_kw(expr, "dtype"), scope)
            dev = _kw(expr, "device")
            lib = self._library(nm)
            t.device = self._device(dev, scope) if dev is not None else (
                "cpu" if lib == "numpy" or (lib == "torch" and not self.default_device_changed) else None)
            if short.endswith("_like") and expr.args:
                base = self.describe(expr.args[0], scope, depth + 1)
                t.shape, t.dtype = base.shape, t.dtype or base.dtype
                t.dtype_default = base.dtype_default and not _kw(expr, "dtype")
                t.device = self._device(dev, scope) if dev is not None else base.device
            else:
                t.shape = self._shape(expr, short, scope)
                # numpy/cupy take the dtype positionally too: zeros(shape, dtype), linspace(a, b, n, ep, rs, dtype)
                at = {"zeros": 1, "ones": 1, "empty": 1, "linspace": 5}.get(short) if lib in ("numpy", "cupy") else None
                positional = at is not None and len(expr.args) > at
                if positional and t.dtype is None:
                    t.dtype = self._dtype(expr.args[at], scope)
                if t.dtype is None and _kw(expr, "dtype") is None and not positional \
                        and short in p.get("float_ctors", ()) and not self.default_dtype_changed:
                    # torch.zeros(n) is float32 and numpy.zeros(n) float64 unless the script changes the default
                    t.dtype = p.get("default_float", {}).get(lib)
                    t.dtype_default = t.dtype is not None
            if short in p.get("zero_ctors", ()):
                t.trivial = "zeros"
            elif short in p.get("one_ctors", ()):
                t.trivial = "ones"
            elif short in p.get("full_ctors", ()):
                t.trivial = "constant"
            elif short in p.get("empty_ctors", ()):
                t.trivial = "empty"
            elif short in p.get("sorted_ctors", ()):
                t.trivial = "sorted"
            return t
        if meth:
            base = self.describe(expr.func.value, scope, depth + 1)
            was = (base.dtype, base.dtype_default)
            if meth in ("half", "bfloat16", "float", "double", "to", "type", "astype"):
                base.dtype_default = False      # a dtype written by the script (restored below if .to() names none)
            if meth in ("half",):
                base.dtype = "fp16"
            elif meth in ("bfloat16",):
                base.dtype = "bf16"
            elif meth in ("float",):
                base.dtype = "fp32"
            elif meth in ("double",):
                base.dtype = "fp64"
            elif meth in ("cuda",):
                base.device = "cuda"
            elif meth in ("cpu",):
                base.device = "cpu"
            elif meth in ("t", "transpose", "permute", "mT"):
                base.layout = "transposed"
            elif meth == "contiguous":
                mf = _kw(expr, "memory_format")
                if mf is not None and "channels_last" in (dotted(mf) or ""):
                    base.layout = "channels_last"
                elif base.layout == "transposed":
                    base.layout = None
            elif meth in ("to", "type", "astype"):
                for a in list(expr.args) + [k.value for k in expr.keywords if k.arg in ("dtype", "device",
                                                                                          "memory_format")]:
                    d = self._dtype(a, scope)
                    if d:
                        base.dtype = d
                        continue
                    dv = self._device(a, scope)
                    if dv:
                        base.device = dv
                    if "channels_last" in (dotted(a) or ""):
                        base.layout = "channels_last"
                if base.dtype == was[0]:
                    base.dtype_default = was[1]
            elif meth in ("sort",):
                base.trivial = "sorted"
            elif meth in ("zero_",):
                base.trivial = "zeros"
            elif meth in ("fill_",):
                base.trivial = "constant"
            elif meth in ("normal_", "uniform_", "random_"):
                base.trivial = None
            elif meth in ("view", "reshape", "expand", "repeat", "clone", "detach", "requires_grad_",
                          "contiguous", "values", "flatten"):
                pass
            else:
                return Tensor()
            return base
        if nm in ("jax.device_put", "jnp.asarray", "jax.numpy.asarray", "torch.as_tensor", "numpy.asarray") \
                and expr.args:
            return self.describe(expr.args[0], scope, depth + 1)
        return Tensor()

    @staticmethod
    def _library(name: str) -> str:
        top = name.split(".")[0]
        return {"np": "numpy", "cp": "cupy", "jnp": "jax"}.get(top, top)

    def _dtype(self, node, scope) -> str | None:
        if node is None:
            return None
        if isinstance(node, ast.Name):
            v = self.value_of(node.id, scope)
            if v is not None and not isinstance(v, ast.Name):
                return self._dtype(v, scope)
        text = dotted(node) if not isinstance(node, ast.Constant) else str(node.value)
        if not text:
            return None
        leaf = text.split(".")[-1]
        if leaf in ("cuda", "cpu", "xla", "mps"):
            return None
        try:
            return normalise_dtype(leaf)
        except DeviceError:
            return None

    def _device(self, node, scope) -> str | None:
        if node is None:
            return None
        if isinstance(node, ast.Name):
            v = self.value_of(node.id, scope)
            return self._device(v, scope) if v is not None and not isinstance(v, ast.Name) else None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.split(":")[0] if node.value.split(":")[0] in ("cuda", "cpu", "xpu", "mps", "meta",
                                                                              "xla", "hip") else None
        if isinstance(node, ast.Call) and self.name(node) == "torch.device" and node.args:
            return self._device(node.args[0], scope)
        return None

    def _shape(self, call: ast.Call, short: str, scope):
        dims = []
        args = list(call.args)
        sk = _kw(call, "size") or _kw(call, "shape")
        if sk is not None:
            args = [sk]
        if short in ("arange",):
            if len(args) == 1:
                n = self.const_int(args[0], scope)
                return (n,) if n is not None else None
            if len(args) >= 2:
                a, b = self.const_int(args[0], scope), self.const_int(args[1], scope)
                return (b - a,) if a is not None and b is not None else None
            return None
        if short in ("full",) and args:
            args = args[:1]
        if short in ("randint",):
            args = [a for a in args if isinstance(a, (ast.Tuple, ast.List))] or args[2:3]
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        if len(args) == 1 and isinstance(args[0], ast.Name):
            v = self.value_of(args[0].id, scope)
            if isinstance(v, (ast.Tuple, ast.List)):
                args = list(v.elts)
        for a in args:
            if isinstance(a, ast.Starred):
                return None
            n = self.const_int(a, scope)
            if n is None:
                return None
            dims.append(n)
        return tuple(dims) if dims else None


def _kw(call: ast.Call, name: str):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _params(fn) -> list[str]:
    a = fn.args
    out = [x.arg for x in a.posonlyargs + a.args]
    return out


def _bind(site: ast.Call, params: list[str]) -> dict:
    out = {}
    extra = []
    for i, a in enumerate(site.args):
        if isinstance(a, ast.Starred):
            return out
        if i < len(params):
            out[params[i]] = a
        else:
            extra.append(a)
    for k in site.keywords:
        if k.arg:
            out[k.arg] = k.value
    if extra:
        out["*args"] = extra
    return out
