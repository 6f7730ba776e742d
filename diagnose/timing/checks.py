"""The checks the timing rules name (`check = "..."` in rules/*.toml): pure functions of a parsed script.

Each takes (script, params) and returns `Hit`s: where, the values its rule's title is formatted with,
and typed facts. The rule (id, severity, texts, parameters) is data; this module holds only the
logic one kind of check needs, so a new rule of an existing kind is a TOML entry.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from diagnose.timing.pyscan import HOST_TIMERS, Script, method_of, segment

CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


@dataclass
class Hit:
    node: object
    values: dict = field(default_factory=dict)       # for the title's {placeholders}
    facts: dict = field(default_factory=dict)
    confidence: float | None = None
    end_node: object = None
    more: list = field(default_factory=list)          # further places (the other side of a comparison)


def _calls_named(s: Script, nodes, names: set, methods: set = frozenset()):
    for st in nodes:
        for c in ast.walk(st):
            if isinstance(c, ast.Call) and (s.name(c) in names or method_of(c.func) in methods):
                yield c


def _synced(s: Script, r, params) -> bool:
    """A device wait after the last timed call (a sync before the work does not make the stop clock wait)."""
    syncs, methods = set(params.get("syncs", ())), set(params.get("sync_methods", ()))
    work = s.work_calls(r)
    last = max(((getattr(c, "end_lineno", c.lineno), getattr(c, "end_col_offset", 0)) for c in work), default=(0, 0))
    nodes = r.body + ([r.stop] if r.stop is not None else [])
    for c in _calls_named(s, nodes, syncs, methods):
        if (c.lineno, c.col_offset) >= last or any(w in set(ast.walk(c)) for w in work):
            return True         # after the work, or wrapping it: f(x).block_until_ready(), f(x).item()
    # one level into local functions: bench helpers and wrappers that synchronise themselves
    for c in work:
        fn = s.funcs.get(s.name(c))
        if fn is not None and any(True for _ in _calls_named(s, fn.body, syncs, methods)):
            return True
    return False


def _device_timing(s: Script, r) -> bool:
    """Whether a region times device work: events and GPU harnesses always; a host timer or timeit
    only with evidence of device work (else it may time compilation, I/O: not a kernel benchmark)."""
    return r.kind in ("event", "do_bench", "torch_timer") or s.launches_gpu_work(r)


def _array_timing(s: Script, r) -> bool:
    """Device timing, or a region whose timed calls get arrays the script makes (torch/numpy/jax
    tensors: `fused_gelu_scale(x, s)` with x = torch.zeros(...)): array compute on the CPU is a kernel
    benchmark too, for the rules that do not depend on the device (repetitions, spread, one-sided work)."""
    if _device_timing(s, r):
        return True
    return any(s.describe(a, x.scope).ctor for x in s.sides if x.region is r for a in x.args
               if not isinstance(a, ast.Starred))


def _work_label(s: Script, r) -> str:
    w = s.work_calls(r)
    label = segment(s.src, w[0])[:60] if w else "the timed code"
    via = sorted({x.fn[:30] for x in s.sides if x.region is r and x.node not in w})
    return f"{label} (timing {', '.join(via)})" if via else label


@check
def host_timer_without_sync(s: Script, params) -> list[Hit]:
    if not s.uses_gpu:
        return []
    hits = []
    for r in s.regions:
        if r.kind not in ("host", "timeit") or not s.work_calls(r) or _synced(s, r, params):
            continue
        if not s.launches_gpu_work(r):
            continue            # host work (compiling, I/O) or nothing known to run on the device: say nothing
        hits.append(Hit(r.start, {"work": _work_label(s, r)}, {"timer": r.kind}, 0.85, r.stop))
    return hits


def _is_jit(s: Script, name: str, params) -> bool:
    fn = s.funcs.get(name)
    jit = set(params.get("jit_decorators", ()))
    if fn is not None:
        for d in fn.decorator_list:
            dn = s.src.resolve((ast.unparse(d.func if isinstance(d, ast.Call) else d)))
            if dn in jit:
                return True
    v = s.value_of(name, s.tree)
    if isinstance(v, ast.Call) and s.name(v) in set(params.get("jit_wrappers", ())):
        return True
    return False


@check
def first_call_timed(s: Script, params) -> list[Hit]:
    hits = []
    for r in s.regions:
        device = _device_timing(s, r)
        if r.does("warmup") or not (device or _array_timing(s, r)):
            continue
        loop = s.enclosing(r.start, (ast.For, ast.While))
        var = getattr(getattr(loop, "target", None), "id", None)
        if var is not None and any(isinstance(n, ast.Compare) and any(isinstance(x, ast.Name) and x.id == var
                                                                     for x in ast.walk(n)) for n in ast.walk(loop)):
            continue            # `if i >= warmup:` style: the loop discards its first iterations
        for c in s.work_calls(r):
            name = s.name(c) or ""
            if not name:
                continue
            same = s.calls_by_name.get(name, [])
            lo, hi = _def_line(r.scope), getattr(r.scope, "end_lineno", None) or 1 << 30
            earlier = [n for n in same if n.lineno < r.line and (r.scope is s.tree or lo <= n.lineno <= hi)
                       and not _inside(n, s.regions, exclude=r)]
            if r.scope is not s.tree:
                earlier += [n for n in same if n.lineno < lo and not _inside(n, s.regions)]
            if earlier:
                continue
            jit = _is_jit(s, name, params)
            if not device and not jit:
                continue        # on the CPU, only a JIT's first call (the compile) is a large one-time cost
            hits.append(Hit(c, {"work": segment(s.src, c)[:60], "jit": "a JIT-compiled " if jit else ""},
                            {"jit": jit}, 0.9 if jit else 0.6))
            break
    return hits


def _def_line(scope) -> int:
    return getattr(scope, "lineno", 1)


def _inside(node, regions, exclude=None) -> bool:
    line = getattr(node, "lineno", 0)
    for r in regions:
        if r is exclude or r.kind not in ("host", "event"):
            continue
        if r.line < line <= r.end_line:
            return True
    return False


@check
def trivial_inputs(s: Script, params) -> list[Hit]:
    out_name = re.compile(params.get("output_names", r"^(out|output|result|res|dst|buf|buffer)(_\w*)?$|_out$"))
    found: dict = {}            # the tensor's constructor -> (tensor, [calls that get it])
    for side in s.sides:
        for a in side.args + [v for k, v in side.kwargs.items() if k not in ("out",)]:
            if isinstance(a, ast.Name) and out_name.search(a.id):
                continue            # an output buffer: zeros / empty are the normal way to make one
            t = s.describe(a, side.scope)
            if t.trivial:
                key = id(t.node) if t.node is not None else id(a)
                _, calls = found.setdefault(key, (t, []))
                if side.label not in calls:
                    calls.append(side.label)
    hits = []
    for t, calls in found.values():
        kind = {"zeros": "all zeros", "ones": "all ones", "constant": "one constant", "empty":
                "uninitialised memory (torch.empty: whatever was there, often zeros)",
                "sorted": "already sorted / regular"}[t.trivial]
        shown = calls[0] if len(calls) == 1 else ", ".join(calls[:-1]) + " and " + calls[-1]
        hits.append(Hit(t.node, {"calls": shown, "kind": kind}, {"data": t.trivial, "constructor": t.ctor,
                                                                 "timed_calls": calls}, 0.6))
    return hits


def _profiles(s: Script, attribute: str):
    out = []
    for side in s.sides:
        vals, assumed = [], False
        for a in side.args:
            t = s.describe(a, side.scope)
            v = getattr(t, attribute)
            if t.ctor or t.dtype or t.shape:
                vals.append(v)
                assumed = assumed or (attribute == "dtype" and t.dtype_default)
        if vals:
            out.append((side, vals, assumed))
    return out


@check
def sides_differ(s: Script, params) -> list[Hit]:
    """A side whose inputs differ (in one attribute) from every side of another function it is compared
    with. A sweep (both functions on fp16, then both on fp32) matches pairwise and gives nothing."""
    attribute = params["attribute"]
    prof, assumed = [], set()
    for side, vals, default in _profiles(s, attribute):
        v = tuple((x or "row-major") if attribute == "layout" else x for x in vals)
        if None in v:
            continue            # unknown on this side: say nothing about it
        prof.append((side, set(v) if attribute == "dtype" else v))
        if default:
            assumed.add(id(side))
    fns = {side.fn for side, _ in prof}
    if len(fns) < 2:
        return []
    fmt = lambda v: ", ".join(str(x) for x in (sorted(v) if isinstance(v, set) else v))  # noqa: E731
    for side, v in prof:
        others = [(o, ov) for o, ov in prof if o.fn != side.fn]
        comparable = [(o, ov) for o, ov in others if attribute == "dtype" or len(ov) == len(v)]
        if comparable and all(ov != v for _, ov in comparable):
            o, ov = comparable[0]
            first, second = sorted([(o, ov), (side, v)], key=lambda x: getattr(x[0].node, "lineno", 0))
            facts = {attribute: {first[0].label: fmt(first[1]), second[0].label: fmt(second[1])}}
            shown = []
            for x, xv in (first, second):
                text = fmt(xv)
                if id(x) in assumed:
                    text += ", the default"         # no dtype= written: the library's default dtype
                    facts.setdefault("assumed", []).append(f"{x.label}: no dtype given, the library default")
                shown.append(text)
            return [Hit(second[0].node, {"a": first[0].label, "va": shown[0], "b": second[0].label,
                                         "vb": shown[1]}, facts, 0.85, more=[first[0].node])]
    return []


@check
def setting_between_sides(s: Script, params) -> list[Hit]:
    names, calls = set(params.get("settings", ())), set(params.get("setting_calls", ()))
    spans = sorted({(r.line, r.end_line) for r in s.regions if s.work_calls(r) or r.kind != "host"})
    side_lines = sorted({getattr(x.node, "lineno", 0) for x in s.sides})
    if len(side_lines) < 2:
        return []
    hits = []
    for n in s.nodes:
        target = None
        if isinstance(n, ast.Assign):
            for t in n.targets:
                d = s.src.resolve(ast.unparse(t))
                if d in names:
                    target = d
        elif isinstance(n, ast.Call) and s.name(n) in calls:
            target = s.name(n)
        if target is None:
            continue
        line = n.lineno
        if any(a < line <= b for a, b in spans):
            continue
        before = {x.fn for x in s.sides if getattr(x.node, "lineno", 0) < line}
        after = {x.fn for x in s.sides if getattr(x.node, "lineno", 0) > line}
        # a function timed only before the change and another only after it: one side got the setting
        if before and after and (before - after) and (after - before):
            hits.append(Hit(n, {"setting": segment(s.src, n)[:60]}, {"setting": target, "line": line}, 0.85))
    return hits


@check
def compiled_one_side(s: Script, params) -> list[Hit]:
    wrappers = set(params.get("compile_wrappers", ()))
    comp, plain = [], []
    for side in s.sides:
        base = side.fn.split("(")[0]
        v = s.value_of(base, side.scope)
        fn = s.funcs.get(base)
        is_c = (isinstance(v, ast.Call) and s.name(v) in wrappers) or (
            fn is not None and any(s.src.resolve(ast.unparse(d.func if isinstance(d, ast.Call) else d)) in wrappers
                                   for d in fn.decorator_list))
        (comp if is_c else plain).append(side)
    if comp and plain:
        return [Hit(comp[0].node, {"compiled": comp[0].label, "eager": plain[0].label}, {}, 0.5)]
    return []


@check
def memoized_side(s: Script, params) -> list[Hit]:
    decos = set(params.get("cache_decorators", ()))
    hits, done = [], set()
    for side in s.sides:
        fn = s.funcs.get(side.fn.split("(")[0])
        if fn is None or fn.name in done:
            continue
        done.add(fn.name)
        for d in fn.decorator_list:
            dn = s.src.resolve(ast.unparse(d.func if isinstance(d, ast.Call) else d))
            if dn in decos:
                hits.append(Hit(d, {"fn": fn.name, "how": f"@{ast.unparse(d)}"}, {"decorator": dn}, 0.9))
        # `if key in CACHE: return CACHE[key]` with CACHE a module-level name
        for n in ast.walk(fn):
            if isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and any(isinstance(o, ast.In)
                                                                               for o in n.test.ops):
                cont = n.test.comparators[0]
                if isinstance(cont, (ast.Name, ast.Attribute)) and _module_level(s, cont) and any(
                        isinstance(b, ast.Return) for b in n.body):
                    hits.append(Hit(n, {"fn": fn.name, "how": f"a lookup in {ast.unparse(cont)}"},
                                    {"cache": ast.unparse(cont)}, 0.85))
                    break
    return hits


def _module_level(s: Script, node) -> bool:
    if isinstance(node, ast.Attribute):
        return True         # self._cache / obj.cache: state that outlives the call
    return node.id in s.assignments(s.tree)


@check
def out_buffer_one_side(s: Script, params) -> list[Hit]:
    kws = set(params.get("out_keywords", ("out",)))
    with_out = [x for x in s.sides if kws & set(x.kwargs)]
    without = [x for x in s.sides if not (kws & set(x.kwargs))]
    if with_out and without:
        side = with_out[0]
        return [Hit(side.node, {"a": side.label, "b": without[0].label}, {}, 0.6)]
    return []


@check
def cache_resident_loop(s: Script, params) -> list[Hit]:
    named = params.get("l2_bytes")          # --device: the reviewer names the GPU the script runs on
    l2 = float(named or params.get("default_l2_mb", 50) * 1e6)
    where = f"the named device's {l2 / 1e6:g} MB L2" if named else (
        f"a {l2 / 1e6:g} MB L2 ({params.get('default_l2_device', 'a common GPU')}'s, assumed)")
    flush_words = tuple(params.get("flush_words", ()))
    hits = []
    for r in s.regions:
        if r.does("flush") or not (r.reps and r.reps > 1):
            continue
        sides = [x for x in s.sides if x.region is r]
        if not sides:
            continue
        if not (r.kind == "event" or s.launches_gpu_work(r)):
            # no sign the work runs on a GPU: a GPU's L2 says nothing about it. Only where the reviewer
            # names a device and the inputs' device is unknown (not made on the CPU) is its L2 used.
            if not named or any(s.describe(a, x.scope).device == "cpu" for x in sides for a in x.args):
                continue
        loop = s.enclosing(r.start, (ast.For, ast.While)) if r.kind in ("host", "event") else None
        scope_nodes = [loop] if loop is not None else r.body
        flushed = False
        for st in scope_nodes:
            for c in ast.walk(st):
                if isinstance(c, ast.Call):
                    text = (s.name(c) or segment(s.src, c)).lower()
                    if any(w in text for w in flush_words):
                        flushed = True
                    if method_of(c.func) in ("zero_", "fill_", "random_", "normal_", "uniform_"):
                        t = s.describe(c.func.value, r.scope)
                        nb = t.nbytes()
                        if nb is not None and nb >= l2:
                            flushed = True
        if flushed:
            continue
        for side in sides:
            sizes = []
            for a in side.args:
                t = s.describe(a, side.scope)
                if t.ctor or t.shape:
                    sizes.append(t.nbytes())
            if sizes and None not in sizes and sum(sizes) < l2:
                hits.append(Hit(side.node, {"mb": f"{sum(sizes) / 1e6:.3g}", "l2": where, "fn": side.label},
                                {"working_set_bytes": sum(sizes), "l2_bytes": l2,
                                 "l2_from": "--device" if named else "assumed (default_l2_mb)"}, 0.6))
                break
    return hits


@check
def few_repetitions(s: Script, params) -> list[Hit]:
    least = int(params.get("min_reps", 10))
    hits = []
    for r in s.regions:
        if r.does("reps") and r.kind != "timeit":
            continue
        if not (r.kind in ("host", "event", "timeit") and (s.work_calls(r) or r.kind == "timeit")):
            continue
        if not _array_timing(s, r):
            continue
        if r.reps_known and r.reps is not None and r.reps < least:
            if any(o is not r and o.scope is r.scope and o.line > r.end_line for o in s.regions) \
                    and not _reported(s, r, params):
                continue        # a short first pass that estimates the run time before the real loop
            what = "a single measurement" if r.reps == 1 else f"{r.reps} repetitions"
            hits.append(Hit(r.start, {"what": what, "least": least}, {"reps": r.reps}, 0.7, r.stop))
    return hits


def _reported(s: Script, r, params) -> bool:
    """Whether the time a region measures is reported (printed, returned, written, put in a ratio that
    is printed) rather than used to size the real loop (`n = int(100 / estimate)`): a cold single pass
    before the loop is an estimate only if nothing reports it."""
    stop = r.stop
    if not isinstance(stop, ast.Assign):
        return False
    names = {t.id for t in stop.targets if isinstance(t, ast.Name)}
    sizing = set(params.get("sizing_calls", ()))
    for n in s.nodes:
        if not (isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)) or n.lineno <= stop.lineno:
            continue
        if s.scope_of(n) is not r.scope:
            continue
        p = s.parents.get(n)
        while p is not None and not isinstance(p, ast.stmt):
            if isinstance(p, ast.Call) and s.name(p) in sizing:
                break           # sizes the measurement: an estimate
            if isinstance(p, ast.JoinedStr) or (isinstance(p, ast.Call) and s.name(p) in ("print", "json.dump",
                                                                                          "json.dumps")):
                return True
            p = s.parents.get(p)
        else:
            if isinstance(p, ast.Return):
                return True
    return False


def _aggregations(s: Script, params):
    """(list name, kind) for min(...)/median/mean calls on lists filled inside timed regions."""
    central, best = set(params.get("central", ())), set(params.get("best", ()))
    filled = set()
    for r in s.regions:
        for st in r.body + ([r.stop] if r.stop is not None else []):
            for c in ast.walk(st):
                if isinstance(c, ast.Call) and method_of(c.func) == "append" and isinstance(c.func.value, ast.Name):
                    filled.add(c.func.value.id)
    # lists returned by bench helpers and bound at call sites: times = bench(...)
    for n in s.nodes:
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name):
            fn = s.funcs.get(n.value.func.id)
            if fn is not None and any(isinstance(x, ast.Return) and isinstance(x.value, ast.Name) and x.value.id
                                      in filled for x in ast.walk(fn)):
                filled |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    out = []
    for c in s.all_calls:
        nm = s.name(c) or method_of(c.func)
        target = c.args[0] if c.args else (c.func.value if isinstance(c.func, ast.Attribute) else None)
        if not isinstance(target, ast.Name) or target.id not in filled:
            continue
        if nm in best:
            out.append((target.id, "best", c))
        elif nm in central or method_of(c.func) in {x.split(".")[-1] for x in central if "." not in x}:
            out.append((target.id, "central", c))
    return out, filled


@check
def min_against_central(s: Script, params) -> list[Hit]:
    aggs, _ = _aggregations(s, params)
    kinds = {}
    for name, kind, c in aggs:
        kinds.setdefault(kind, []).append((name, c))
    if "best" in kinds and "central" in kinds:
        b = kinds["best"][0]
        m = next((x for x in kinds["central"] if x[0] != b[0]), None)
        if m is not None:
            return [Hit(b[1], {"a": b[0], "b": m[0], "fa": segment(s.src, b[1])[:30],
                               "fb": segment(s.src, m[1])[:30]}, {}, 0.8)]
    return []


@check
def no_spread(s: Script, params) -> list[Hit]:
    timed = [r for r in s.regions if (s.work_calls(r) or r.kind != "host") and _array_timing(s, r)]
    if not timed:
        return []
    spread = set(params.get("spread", ()))
    if any(r.does("spread") and _harness_spread(s, r, params) for r in timed):
        return []
    for c in s.all_calls:
        if (s.name(c) in spread) or method_of(c.func) in set(params.get("spread_methods", ())):
            return []
    for n in s.nodes:
        if isinstance(n, ast.Attribute) and n.attr in set(params.get("spread_attributes", ())):
            return []
    return [Hit(timed[0].start, {}, {}, 0.6)]


def _harness_spread(s: Script, r, params) -> bool:
    c = r.harness_call
    if c is None:
        return False
    if r.kind == "torch_timer":
        return True             # a Measurement carries (and prints) its median and IQR
    if r.kind == "do_bench":
        if any(k.arg == "quantiles" for k in c.keywords):
            return True
        mode = next((k.value for k in c.keywords if k.arg == "return_mode"), None)
        if mode is not None:
            # return_mode="all" returns every time (a spread can be computed); "median"/"mean"/"min" one number
            return not (isinstance(mode, ast.Constant) and mode.value in params.get("single_return_modes", ()))
        # older triton returned (median, p20, p80): `ms, lo, hi = do_bench(fn)`
        parent = s.parents.get(c)
        return isinstance(parent, ast.Assign) and any(isinstance(t, ast.Tuple) for t in parent.targets)
    return False


@check
def distorting_mode(s: Script, params) -> list[Hit]:
    envs, calls, withs = set(params.get("env_vars", ())), set(params.get("calls", ())), set(params.get("contexts", ()))
    if not s.uses_gpu:
        # CUDA_LAUNCH_BLOCKING and the like change nothing in a script that runs no GPU work
        gpu_only = set(params.get("gpu_only", ()))
        envs, calls, withs = envs - gpu_only, calls - gpu_only, withs - gpu_only
    hits = []
    for n in s.nodes:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Subscript) and s.src.resolve(ast.unparse(t.value)) == "os.environ":
                    key = t.slice
                    if isinstance(key, ast.Constant) and key.value in envs:
                        hits.append(Hit(n, {"what": f"{key.value}={ast.unparse(n.value)}"}, {"env": key.value}, 0.8))
        elif isinstance(n, ast.Call):
            nm = s.name(n)
            if nm in ("os.environ.setdefault", "os.putenv", "os.environ.update") and n.args and isinstance(
                    n.args[0], ast.Constant) and n.args[0].value in envs:
                hits.append(Hit(n, {"what": f"{n.args[0].value} set"}, {"env": n.args[0].value}, 0.8))
            elif nm in calls and not (n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value is False):
                hits.append(Hit(n, {"what": segment(s.src, n)[:50]}, {"call": nm}, 0.8))
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            for item in n.items:
                ce = item.context_expr
                nm = s.name(ce) if isinstance(ce, ast.Call) else (s.src.resolve(ast.unparse(ce)) or "")
                if nm in withs and any(r.line >= n.lineno and r.end_line <= (n.end_lineno or 0) for r in s.regions):
                    hits.append(Hit(n, {"what": f"{nm}(...) around the timed code"}, {"context": nm}, 0.8))
    return hits


@check
def copy_in_one_side(s: Script, params) -> list[Hit]:
    names, methods = set(params.get("alloc_calls", ())), set(params.get("copy_methods", ()))
    per = []
    for r in s.regions:
        if (not s.work_calls(r) and r.kind == "host") or not _array_timing(s, r):
            continue
        mine = methods if _device_timing(s, r) else methods - set(params.get("free_on_cpu", ()))
        found = [c for c in _calls_named(s, r.body, names, mine)]
        per.append((r, found))
    if len(per) < 2:
        return []
    have = [(r, f) for r, f in per if f]
    lack = [r for r, f in per if not f]
    if have and lack:
        r, f = have[0]
        return [Hit(f[0], {"what": segment(s.src, f[0])[:50]}, {"calls": [segment(s.src, x)[:50] for x in f]}, 0.6)]
    return []


@check
def event_other_stream(s: Script, params) -> list[Hit]:
    ctx = set(params.get("stream_contexts", ()))
    hits = []
    for r in s.regions:
        if r.kind != "event":
            continue
        rec = next((c for c in ast.walk(r.start) if isinstance(c, ast.Call) and method_of(c.func) == "record"), None)
        if rec is None or rec.args or rec.keywords:
            continue
        outer = s.enclosing(r.start, (ast.With,))
        if outer is not None and any((s.name(i.context_expr) if isinstance(i.context_expr, ast.Call) else "") in ctx
                                     for i in outer.items):
            continue
        for st in r.body:
            if isinstance(st, ast.With) and any(isinstance(i.context_expr, ast.Call) and s.name(i.context_expr)
                                                in ctx for i in st.items):
                hits.append(Hit(r.start, {"stream": ast.unparse(st.items[0].context_expr)[:40]}, {}, 0.75, st))
                break
    return hits


__all__ = ["CHECKS", "Hit", "HOST_TIMERS"]
