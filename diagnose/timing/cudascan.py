"""Timing checks for CUDA C++ benchmark code (tree-sitter tree from diagnose.source.cuda).

Regions are statement runs of one block between two host-clock reads (std::chrono ... ::now(),
clock(), gettimeofday, omp_get_wtime) or between two cudaEventRecord calls; the checks named by
rules/cuda.toml are pure functions of the parsed file and the rule's parameters.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from diagnose.source.cuda import CudaSource, call_args, callee, calls, launches, walk
from diagnose.timing.checks import Hit

CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


@dataclass
class Region:
    kind: str                  # host | event
    start: object
    stop: object
    body: list = field(default_factory=list)


def _matches(name: str, names) -> bool:
    return any(name == n or name.endswith("::" + n) or name.endswith(n) and n.startswith("::") for n in names)


def _has_call(node, names) -> bool:
    return any(_matches(callee(c), names) for c in calls(node))


def _blocks(src: CudaSource):
    for b in walk(src.root, ("compound_statement",)):
        yield [c for c in b.named_children if c.type != "comment"]


def regions(src: CudaSource, params) -> list[Region]:
    timers = params.get("timers", ())
    out = []
    for stmts in _blocks(src):
        i = 0
        while i < len(stmts):
            st = stmts[i]
            if st.type != "compound_statement" and not st.type.endswith(("for_statement", "while_statement")):
                if _has_call(st, timers):
                    j = next((k for k in range(i + 1, len(stmts)) if _has_call(stmts[k], timers)
                              and not stmts[k].type.endswith(("for_statement", "while_statement"))), None)
                    if j is not None:
                        out.append(Region("host", st, stmts[j], stmts[i + 1:j]))
                        i = j + 1
                        continue
                rec = _record_of(st)
                if rec is not None:
                    j = next((k for k in range(i + 1, len(stmts)) if _record_of(stmts[k]) not in (None, rec)), None)
                    if j is not None:
                        out.append(Region("event", st, stmts[j], stmts[i + 1:j]))
                        i = j + 1
                        continue
            i += 1
    return out


def _record_of(stmt):
    for c in calls(stmt, ("cudaEventRecord", "hipEventRecord")):
        a = call_args(c)
        if a:
            return a[0].text
    return None


def _gpu_work(src, nodes, params) -> list:
    work = []
    for n in nodes:
        work += [lc.node for lc in launches(src, n)]
        work += [c for c in calls(n) if any(callee(c).startswith(p) for p in params.get("gpu_call_prefixes", ()))]
    return sorted(work, key=lambda x: x.start_byte)


@check
def host_timer_without_sync(src: CudaSource, params) -> list[Hit]:
    hits = []
    syncs = params.get("syncs", ())
    for r in regions(src, params):
        if r.kind != "host":
            continue
        work = _gpu_work(src, r.body, params)
        if not work:
            continue
        last = work[-1].end_byte
        synced = any(_matches(callee(c), syncs) and c.start_byte > last
                     for n in r.body + [r.stop] for c in calls(n))
        if not synced:
            first = work[0]
            k = next((lc.kernel for lc in launches(src, first) if lc.node == first), None)
            label = f"{k}<<<...>>>" if k else callee(first)[:50]
            hits.append(Hit(r.start, {"work": label}, {"timer": "host"}, 0.9, r.stop))
    return hits


@check
def elapsed_without_event_sync(src: CudaSource, params) -> list[Hit]:
    hits = []
    syncs = params.get("syncs", ())
    for fn in walk(src.root, ("function_definition",)):
        cs = sorted(calls(fn), key=lambda c: c.start_byte)
        for c in cs:
            if callee(c) not in ("cudaEventElapsedTime", "hipEventElapsedTime"):
                continue
            a = call_args(c)
            if len(a) < 3:
                continue
            stop = a[2].text
            rec = [x for x in cs if callee(x) in ("cudaEventRecord", "hipEventRecord") and x.start_byte < c.start_byte
                   and call_args(x) and call_args(x)[0].text == stop]
            if not rec:
                continue
            after = rec[-1].start_byte
            ok = any(_matches(callee(x), syncs) and after < x.start_byte < c.start_byte for x in cs)
            if not ok:
                hits.append(Hit(c, {"stop": stop.decode("utf-8", "replace")}, {}, 0.9))
    return hits


@check
def first_launch_timed(src: CudaSource, params) -> list[Hit]:
    hits = []
    every = launches(src)
    for r in regions(src, params):
        for n in r.body:
            for lc in launches(src, n):
                earlier = [x for x in every if x.kernel == lc.kernel and x.node.start_byte < r.start.start_byte]
                if not earlier:
                    hits.append(Hit(lc.node, {"kernel": lc.kernel}, {"kernel": lc.kernel}, 0.6))
                    break
            else:
                continue
            break
    return hits
