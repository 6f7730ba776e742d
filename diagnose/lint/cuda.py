"""The checks of the CUDA C++ rules (their docs are in rules/cuda.toml)."""
from __future__ import annotations

from diagnose.lint.cudactx import SIZEOF, CudaContext, NARROW, is_builtin, mentions, strip_type
from diagnose.lint.registry import Hit, check
from diagnose.source import cuda as cu

_COND_PARENTS = {"if_statement": "condition", "while_statement": "condition", "for_statement": "condition",
                 "do_statement": "condition", "conditional_expression": "condition", "switch_statement": "condition"}
_BARRIERS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}
_WARP_SYNC = {"__shfl_sync", "__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync", "__ballot_sync",
              "__any_sync", "__all_sync", "__match_any_sync", "__match_all_sync", "__reduce_add_sync",
              "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"}
_LEGACY = {"__shfl": "__shfl_sync", "__shfl_down": "__shfl_down_sync", "__shfl_up": "__shfl_up_sync",
           "__shfl_xor": "__shfl_xor_sync", "__ballot": "__ballot_sync", "__any": "__any_sync", "__all": "__all_sync"}


def _conditions(node, stop):
    """(condition node, construct) of every if/while/for/?: enclosing node below stop, where node
    is inside the construct's body (not its condition)."""
    out = []
    child = node
    for a in cu.ancestors(node):
        if a == stop:
            break
        field = _COND_PARENTS.get(a.type)
        if field:
            cond = a.child_by_field_name(field)
            if cond is not None and not (cond.start_byte <= child.start_byte and child.end_byte <= cond.end_byte):
                out.append((cond, a))
        child = a
    return out


def _ceil_div(ctx, node) -> bool:
    """`(n + B - 1) / B`, `(n + B - 1) >> k`, or a ceil-div helper (cdiv, ceil_div, DIV_UP, divUp...)."""
    for n in cu.walk(node):
        if n.type == "call_expression":
            name = cu.callee(n).lower().replace("_", "")
            if any(s in name for s in ("cdiv", "ceildiv", "divup", "divceil", "roundup", "ceil")):
                return True
        if n.type == "binary_expression" and ctx.text(n.child_by_field_name("operator")) in ("/", ">>"):
            left = ctx.text(n.child_by_field_name("left")).replace(" ", "")
            if "+" in left and "-1" in left:
                return True
            b = ctx.value(n.child_by_field_name("right"))
            if ctx.text(n.child_by_field_name("operator")) == ">>" and b is not None:
                b = 1 << b
            consts = sum(ctx.value(t) or 0 for t in _terms(ctx, n.child_by_field_name("left")) if t.type == "number_literal")
            if b and b > 1 and consts == b - 1:
                return True
    return False


def _terms(ctx, node):
    """The terms of a sum (parentheses opened; a - b gives b as a term only when b is not constant)."""
    while node is not None and node.type == "parenthesized_expression":
        node = node.named_children[0] if node.named_children else None
    if node is None:
        return []
    if node.type == "binary_expression" and ctx.text(node.child_by_field_name("operator")) == "+":
        return _terms(ctx, node.child_by_field_name("left")) + _terms(ctx, node.child_by_field_name("right"))
    return [node]


def _grid_nodes(ctx, launch):
    scope = ctx.enclosing_function(launch.node)
    return ctx.dims(launch.grid, scope) or []


@check("lint.cuda.unguarded-global-index")
def unguarded_global_index(ctx: CudaContext):
    for k in ctx.kernels:
        fl = ctx.flow(k)
        launches = ctx.launches_of(k.name)
        rounded = any(any(_ceil_div(ctx, g) for g in _grid_nodes(ctx, l)) for l in launches)
        if launches and not rounded:
            continue      # exact grids: the floor-division rule speaks for them
        early = []        # `if (cond) return;` statements: their conditions guard what follows
        for s in cu.walk(k.body, ("if_statement",)):
            cons = s.child_by_field_name("consequence")
            if cons is not None and (cons.type == "return_statement" or any(
                    c.type == "return_statement" for c in cons.named_children)):
                early.append(s)
        bad = []
        for sub in cu.walk(k.body, ("subscript_expression",)):
            arr = sub.child_by_field_name("argument")
            if arr is None or arr.type != "identifier" or ctx.text(arr) not in fl.pointer_params:
                continue
            idx = sub.child_by_field_name("indices") or sub
            used = {i for i in cu.identifiers(idx) if fl.is_global_index(i, sub)}
            raw = mentions(idx, "blockIdx") and mentions(idx, "threadIdx")
            if not used and not raw:
                continue
            need = (fl.sources(used) & fl.global_index) | used if used else set()
            guarded = False
            conds = [c for c, _ in _conditions(sub, k.body)] + [
                e.child_by_field_name("condition") for e in early if e.end_byte <= sub.start_byte]
            for c in conds:
                g = fl.sources(cu.identifiers(c))
                if (need and g & need) or (raw and mentions(c, "threadIdx")):
                    guarded = True
                    break
            if not guarded:
                bad.append((sub, idx))
        if not bad:
            continue
        sub, idx = bad[0]
        sev = "error" if rounded else "warning"
        launch_note = ("its launch rounds the grid up (line %d)" % ctx.src.loc(launches[0].node)[0]) if rounded \
            else "no launch of it in this file shows the grid"
        more = f" ({len(bad) - 1} more unguarded access{'es' if len(bad) > 2 else ''} in this kernel)" if len(bad) > 1 else ""
        yield Hit(sub, f"{ctx.text(sub)} in {k.name} indexes with a global thread index and no bounds check"
                       f"{more}; {launch_note}, so the last block's extra threads touch memory past the end",
                  facts={"kernel": k.name, "index": ctx.text(idx).strip("[]"), "unguarded_accesses": len(bad)},
                  severity=sev, also=([launches[0].node] if rounded else []) + [b for b, _ in bad[1:6]])


@check("lint.cuda.syncthreads-divergent")
def syncthreads_divergent(ctx: CudaContext):
    for k in ctx.kernels:
        fl = ctx.flow(k)
        for call in cu.calls(k.body, _BARRIERS):
            for cond, construct in _conditions(call, k.body):
                if fl.thread_dependent(cond):
                    yield Hit(call, f"{cu.callee(call)}() in {k.name} sits under `{ctx.text(cond).strip('()')}` "
                                    f"(line {ctx.src.loc(construct)[0]}), which differs between threads: threads "
                                    "that skip the barrier leave the others waiting (deadlock or undefined behaviour)",
                              facts={"kernel": k.name, "condition": ctx.text(cond)}, also=[construct])
                    break


@check("lint.cuda.shared-bank-conflict")
def shared_bank_conflict(ctx: CudaContext):
    for k in ctx.kernels:
        fl = ctx.flow(k)
        xdep = {n for n in fl.thread_dep if any(v is not None and mentions(v, "threadIdx", "x")
                                                 for v in fl.values.get(n, []))}
        for name, (ty, dims, decl, extern) in fl.shared.items():
            if len(dims) != 2 or SIZEOF.get(ty) != 4:
                continue
            cols = ctx.value(dims[1])
            if not cols or cols % 32:
                continue
            for sub in cu.walk(k.body, ("subscript_expression",)):
                inner = sub.child_by_field_name("argument")
                if inner is None or inner.type != "subscript_expression":
                    continue
                base = inner.child_by_field_name("argument")
                if base is None or ctx.text(base) != name:
                    continue
                row = inner.child_by_field_name("indices")
                col = sub.child_by_field_name("indices")
                rx = mentions(row, "threadIdx", "x") or bool(cu.identifiers(row) & xdep)
                cx = mentions(col, "threadIdx", "x") or bool(cu.identifiers(col) & xdep)
                if rx and not cx:
                    yield Hit(sub, f"{ctx.text(sub)} in {k.name}: consecutive threadIdx.x pick rows of "
                                   f"{name}[..][{cols}], {cols} words apart, so a warp's 32 accesses hit the same "
                                   f"bank ({32 if cols % 32 == 0 else 0}-way conflict)",
                              facts={"kernel": k.name, "array": name, "row_words": cols},
                              fix=f"pad the row: __shared__ {ty} {name}[{ctx.text(dims[0])}][{ctx.text(dims[1])} + 1];",
                              also=[decl])


def _tx_coef(ctx, fl, node, depth=0):
    """The coefficient of threadIdx.x in an index expression: None (absent), an int, 'sym' (a
    runtime value) or '?' (not linear)."""
    if node is None or depth > 12:
        return None
    t = node.type
    if is_builtin(node, "threadIdx", "x"):
        return 1
    if t in ("parenthesized_expression", "subscript_argument_list"):
        inner = [c for c in node.named_children if c.type != "comment"]
        return _tx_coef(ctx, fl, inner[0], depth + 1) if len(inner) == 1 else None
    if t == "cast_expression":
        return _tx_coef(ctx, fl, node.child_by_field_name("value"), depth + 1)
    if t == "identifier":
        vals = fl.values.get(ctx.text(node), [])
        if len(vals) == 1 and ctx.text(node) not in fl.pointer_params:
            return _tx_coef(ctx, fl, vals[0], depth + 1)
        return "?" if vals and any(mentions(v, "threadIdx", "x") for v in vals if v is not None) else None
    if t == "binary_expression":
        op = ctx.text(node.child_by_field_name("operator"))
        l, r = node.child_by_field_name("left"), node.child_by_field_name("right")
        cl, cr = _tx_coef(ctx, fl, l, depth + 1), _tx_coef(ctx, fl, r, depth + 1)
        if cl is None and cr is None:
            return None
        if op in ("+", "-"):
            return cl if cr is None else cr if cl is None else "?"
        if op == "*":
            if cl is not None and cr is not None:
                return "?"
            c, other = (cl, r) if cl is not None else (cr, l)
            if c == "?":
                return "?"
            v = ctx.value(other)
            if v is None:
                return "sym"
            return c * v if isinstance(c, int) else "sym"
        return "?"
    if mentions(node, "threadIdx", "x"):
        return "?"
    return None


@check("lint.cuda.uncoalesced-thread-stride")
def uncoalesced_thread_stride(ctx: CudaContext):
    for k in ctx.kernels:
        fl = ctx.flow(k)
        for sub in cu.walk(k.body, ("subscript_expression",)):
            arr = sub.child_by_field_name("argument")
            if arr is None or arr.type != "identifier" or ctx.text(arr) not in fl.pointer_params:
                continue
            c = _tx_coef(ctx, fl, sub.child_by_field_name("indices"))
            if c == "sym" or (isinstance(c, int) and c >= 4):
                stride = "a runtime stride" if c == "sym" else f"{c} elements"
                yield Hit(sub, f"{ctx.text(sub)} in {k.name}: neighbouring threadIdx.x read addresses "
                               f"{stride} apart, so a warp's access is split into up to 32 memory transactions "
                               "instead of a few", facts={"kernel": k.name, "coefficient": c})


_CHECKS = ("cudaGetLastError", "cudaPeekAtLastError", "C10_CUDA_KERNEL_LAUNCH_CHECK", "getLastCudaError")


@check("lint.cuda.launch-unchecked")
def launch_unchecked(ctx: CudaContext):
    for l in ctx.launches:
        fn = ctx.enclosing_function(l.node)
        if fn is None:
            continue
        after = [c for c in cu.walk(fn, ("call_expression", "identifier")) if c.start_byte > l.node.end_byte]
        names = {cu.callee(c) if c.type == "call_expression" else ctx.text(c) for c in after}
        if any(n in _CHECKS or "LastError" in n or "LAUNCH_CHECK" in n.upper() for n in names):
            continue
        yield Hit(l.node, f"the launch of {l.kernel} is never followed by cudaGetLastError() / "
                          "cudaPeekAtLastError(): a bad configuration or missing kernel image passes silently and the "
                          "error surfaces later at an unrelated call", facts={"kernel": l.kernel})


def _block_threads(ctx, l):
    scope = ctx.enclosing_function(l.node)
    dims = ctx.dims(l.block, scope)
    if not dims:
        return None
    total = 1
    for d in dims:
        v = ctx.value(d)
        if v is None:
            return None
        total *= v
    return total


@check("lint.cuda.block-too-large")
def block_too_large(ctx: CudaContext):
    limit = ctx.tinfo["max_threads_per_block"]
    for l in ctx.launches:
        n = _block_threads(ctx, l)
        if n is not None and n > limit:
            yield Hit(l.node, f"{l.kernel} is launched with {n:,} threads per block; CUDA allows at most "
                              f"{limit}: the launch fails with 'invalid configuration argument'",
                      facts={"kernel": l.kernel, "threads": n, "limit": limit})


@check("lint.cuda.block-not-warp-multiple")
def block_not_warp_multiple(ctx: CudaContext):
    for l in ctx.launches:
        n = _block_threads(ctx, l)
        if n is not None and 1 < n <= ctx.tinfo["max_threads_per_block"] and n % 32:   # <<<g, 1>>>: one thread, on purpose
            yield Hit(l.node, f"{l.kernel} is launched with {n} threads per block, not a multiple of 32: the last "
                              f"warp runs {n % 32} of its 32 lanes", facts={"kernel": l.kernel, "threads": n})


@check("lint.cuda.dynamic-smem-no-attribute")
def dynamic_smem_no_attribute(ctx: CudaContext):
    static = ctx.tinfo["shared_static"]
    optin = ctx.tinfo["shared_optin"]
    raised = set()
    for c in cu.calls(ctx.src.root, ("cudaFuncSetAttribute",)):
        a = cu.call_args(c)
        if len(a) >= 2 and "MaxDynamicSharedMemorySize" in ctx.text(a[1]):
            raised.add(ctx.text(a[0]).lstrip("&").split("<")[0].strip())
    for l in ctx.launches:
        v = ctx.value(l.shared_bytes)
        if v is None or v <= static:
            continue
        if v > optin:
            yield Hit(l.node, f"{l.kernel} asks for {v:,} bytes of dynamic shared memory; {ctx.target} allows "
                              f"{optin:,} per block even with cudaFuncSetAttribute", facts={"kernel": l.kernel,
                              "bytes": v, "limit": optin, "target": ctx.target})
        elif l.kernel.split("<")[0] not in raised:
            yield Hit(l.node, f"{l.kernel} asks for {v:,} bytes of dynamic shared memory, over the default "
                              f"{static:,}, and the file never raises cudaFuncAttributeMaxDynamicSharedMemorySize "
                              "for it: the launch fails", facts={"kernel": l.kernel, "bytes": v, "limit": static})


@check("lint.cuda.static-smem-over-48k")
def static_smem_over_48k(ctx: CudaContext):
    static = ctx.tinfo["shared_static"]
    for k in ctx.kernels:
        fl = ctx.flow(k)
        total, parts = 0, []
        for name, (ty, dims, decl, extern) in fl.shared.items():
            if extern or ty not in SIZEOF:
                continue
            vals = [ctx.value(d) for d in dims]
            if not dims or any(v is None for v in vals):
                continue
            b = SIZEOF[ty]
            for v in vals:
                b *= v
            total += b
            parts.append((name, b, decl))
        if total > static:
            yield Hit(parts[0][2], f"the static __shared__ arrays of {k.name} take {total:,} bytes "
                                   f"({', '.join(f'{n} {b:,}' for n, b, _ in parts)}); static shared memory is "
                                   f"limited to {static:,} bytes: ptxas fails with 'uses too much shared data'",
                      facts={"kernel": k.name, "bytes": total, "limit": static})


@check("lint.cuda.int-index-overflow")
def int_index_overflow(ctx: CudaContext):
    for k in ctx.kernels:
        fl = ctx.flow(k)
        if not fl.wide_params:
            continue
        seen = set()
        for b in cu.walk(k.body, ("binary_expression",)):
            if ctx.text(b.child_by_field_name("operator")) not in ("<", "<=", ">", ">="):
                continue
            sides = [b.child_by_field_name("left"), b.child_by_field_name("right")]
            for s, o in (sides, reversed(sides)):
                if s is None or o is None or s.type != "identifier" or o.type != "identifier":
                    continue
                v, n = ctx.text(s), ctx.text(o)
                if fl.is_global_index(v, b) and n in fl.wide_params and strip_type(fl.types.get(v, "")) in \
                        {strip_type(t) for t in NARROW} and v not in seen:
                    seen.add(v)
                    yield Hit(fl.decl_node.get(v, b), f"{v} in {k.name} is a 32-bit {strip_type(fl.types[v])} "
                                                      f"compared with {n} ({fl.types[n]}): the kernel takes sizes "
                                                      f"past 2^31, where {v} wraps negative",
                              facts={"kernel": k.name, "index": v, "size": n}, also=[b])


def _warp_uniform(ctx, fl, cond) -> bool:
    """A condition every lane of a warp evaluates alike: built from warp ids (x / 32, x >> 5,
    x / warpSize) or comparing a thread index with a multiple of 32."""
    warp_ids = set()
    for name, vals in fl.values.items():
        if vals and all(v is not None and v.type == "binary_expression" and (
                ctx.text(v.child_by_field_name("operator")) in ("/", ">>")) and (
                ctx.value(v.child_by_field_name("right")) in (32, 5) or ctx.text(v.child_by_field_name("right")) == "warpSize")
                for v in vals):
            warp_ids.add(name)
    for leaf in _leaves(cond):
        if not fl.thread_dependent(leaf):
            continue
        ids = cu.identifiers(leaf) & fl.thread_dep
        if ids and ids <= warp_ids:
            continue
        if leaf.type == "binary_expression" and ctx.text(leaf.child_by_field_name("operator")) in ("<", ">=", "<=", ">"):
            v = ctx.value(leaf.child_by_field_name("right"))
            if isinstance(v, int) and v % 32 == 0 and ctx.text(leaf.child_by_field_name("operator")) in ("<", ">="):
                continue
        return False
    return True


def _leaves(cond):
    """The comparisons of a condition split on && and ||."""
    out, todo = [], [cond]
    while todo:
        n = todo.pop()
        if n.type == "parenthesized_expression" or n.type == "condition_clause":
            todo.extend(c for c in n.named_children if c.type != "comment")
        elif n.type == "binary_expression" and n.child_by_field_name("operator").type in ("&&", "||"):
            todo.extend([n.child_by_field_name("left"), n.child_by_field_name("right")])
        else:
            out.append(n)
    return out


@check("lint.cuda.shuffle-full-mask-divergent")
def shuffle_full_mask_divergent(ctx: CudaContext):
    for k in ctx.kernels:
        fl = ctx.flow(k)
        for call in cu.calls(k.body, _WARP_SYNC):
            a = cu.call_args(call)
            if not a or ctx.value(a[0]) not in (0xFFFFFFFF, -1):
                continue
            for cond, construct in _conditions(call, k.body):
                if fl.thread_dependent(cond) and not _warp_uniform(ctx, fl, cond):
                    yield Hit(call, f"{cu.callee(call)}(0xffffffff, ...) in {k.name} names all 32 lanes but runs "
                                    f"under `{ctx.text(cond).strip('()')}` (line {ctx.src.loc(construct)[0]}), which "
                                    "some lanes of a warp skip: undefined behaviour, a hang on sm_70+",
                              facts={"kernel": k.name, "condition": ctx.text(cond)}, also=[construct])
                    break


_OTHER_TOOLCHAIN = ("ROCM", "HIP", "HCC", "CUDA_VERSION", "CUDART_VERSION", "__CUDA_ARCH__", "__NVCC__")


def _under_toolchain_branch(ctx, node) -> bool:
    """node sits in an #if/#ifdef/#else branch chosen by the toolchain (ROCm/HIP, CUDA version,
    __CUDA_ARCH__): nvcc for sm_70+ may never compile it."""
    for a in cu.ancestors(node):
        if a.type in ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_else", "preproc_elifdef"):
            owner = a
            while owner is not None and owner.type in ("preproc_else", "preproc_elif", "preproc_elifdef"):
                owner = owner.parent
            cond = (owner or a).child_by_field_name("condition") or (owner or a).child_by_field_name("name")
            if cond is not None and any(w in ctx.text(cond) for w in _OTHER_TOOLCHAIN):
                return True
    return False


@check("lint.cuda.legacy-shuffle")
def legacy_shuffle(ctx: CudaContext):
    for call in cu.calls(ctx.src.root, set(_LEGACY)):
        if _under_toolchain_branch(ctx, call):
            continue
        name = cu.callee(call)
        yield Hit(call, f"{name}() was removed in CUDA 9 for sm_70+ (and from CUDA 13 headers): nvcc reports "
                        f"'identifier \"{name}\" is undefined'", facts={"function": name},
                  fix=f"use {_LEGACY[name]}(0xffffffff, ...) with the mask of the lanes taking part")


def _is_barrier(ctx, n) -> bool:
    """__syncthreads*/__syncwarp, a cooperative-groups `.sync()` / `cg::sync(g)`, or inline PTX bar.sync / barrier."""
    if n.type == "call_expression":
        name = cu.callee(n)
        return name in _BARRIERS or name in ("__syncwarp", "__barrier_sync") or name.endswith((".sync", "::sync", "->sync"))
    if n.type == "gnu_asm_expression":
        t = ctx.text(n)
        return "bar.sync" in t or "barrier.sync" in t or "bar.arrive" in t
    return False


def _events(ctx, fl, node, names):
    """(kind, array, index text, node, statement number) in source order for shared arrays in names: 'r' read,
    'w' write, 's' a barrier. A statement's reads come before its write."""
    out = []
    for sid, st in enumerate(_statements(node)):
        reads, writes = [], []
        for n in cu.walk(st):
            if _is_barrier(ctx, n):
                out.append(("s", None, None, n, sid))
            if n.type == "subscript_expression":
                base = n
                while base.type == "subscript_expression":
                    base = base.child_by_field_name("argument")
                if base.type != "identifier" or ctx.text(base) not in names:
                    continue
                parent = n.parent
                if parent is not None and parent.type == "subscript_expression" and parent.child_by_field_name("argument") == n:
                    continue            # an inner part of tile[a][b]
                idx = ctx.text(n)[len(ctx.text(base)):].replace(" ", "")
                is_lhs = parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("left") == n
                compound = is_lhs and ctx.text(parent.child_by_field_name("operator")) != "="
                if is_lhs:
                    writes.append(("w", ctx.text(base), idx, n, sid))
                if not is_lhs or compound:
                    reads.append(("r", ctx.text(base), idx, n, sid))
        out.extend(reads + writes)
    return out


def _statements(node):
    """The leaf statements under node in source order (a loop's condition and body included)."""
    out = []
    for n in cu.walk(node):
        if n.type in ("expression_statement", "declaration", "return_statement"):
            if not any(a.type in ("expression_statement", "declaration") for a in cu.ancestors(n) if a != node
                       and a.start_byte >= node.start_byte and a.end_byte <= node.end_byte and a is not n):
                out.append(n)
    return out


def _race(evs):
    """The first (earlier, later) pair of a write then a read (or a read then a write) of one shared
    array at different indices, in different statements, with no barrier between them, or None.
    (Within one statement, like the reduction's `s[tid] = s[tid] + s[tid + k]`, which threads touch
    which element depends on the guard around it: not judged.)"""
    last_w, last_r = {}, {}
    for kind, arr, idx, n, sid in evs:
        if kind == "s":
            last_w.clear()
            last_r.clear()
            continue
        if kind == "r":
            w = [x for x in last_w.get(arr, []) if x[0] != idx and x[2] != sid]
            if w:
                return w[0][1], n, "read after write"
            last_r.setdefault(arr, []).append((idx, n, sid))
        else:
            r = [x for x in last_r.get(arr, []) if x[0] != idx and x[2] != sid]
            if r:
                return r[0][1], n, "write after read"
            last_w.setdefault(arr, []).append((idx, n, sid))
    return None


@check("lint.cuda.shared-race-missing-sync")
def shared_race_missing_sync(ctx: CudaContext):
    for k in ctx.kernels:
        fl = ctx.flow(k)
        names = {n for n, (_, _, d, _) in fl.shared.items() if "volatile" not in ctx.text(d)}
        if not names:
            continue
        found = _race(_events(ctx, fl, k.body, names))
        if found is None:      # across iterations: the loop body twice
            for loop in cu.walk(k.body, ("for_statement", "while_statement", "do_statement")):
                body = loop.child_by_field_name("body")
                if body is None:
                    continue
                evs = _events(ctx, fl, body, names)
                shift = len(evs) + 1     # the second copy is other statements (the next iteration)
                found = _race(evs + [(k, a, i, n, sid + shift) for k, a, i, n, sid in evs])
                if found is not None:
                    found = (found[0], found[1], found[2] + " in the next iteration")
                    break
        if found is not None:
            first, second, what = found
            yield Hit(second, f"{ctx.text(second)} in {k.name}: {what} of the shared array by other threads "
                              f"({ctx.text(first)}, line {ctx.src.loc(first)[0]}) with no __syncthreads() between: "
                              "threads see stale or half-written values", facts={"kernel": k.name}, also=[first])


@check("lint.cuda.grid-floor-division")
def grid_floor_division(ctx: CudaContext):
    for l in ctx.launches:
        kern = next((k for k in ctx.kernels if k.name == l.kernel.split("<")[0]), None)
        if kern is not None and mentions(kern.body, "gridDim"):
            continue               # a grid-stride loop covers every element whatever the grid
        for g in _grid_nodes(ctx, l):
            if g.type == "binary_expression" and ctx.text(g.child_by_field_name("operator")) == "/" \
                    and not _ceil_div(ctx, g):
                a, b = ctx.value(g.child_by_field_name("left")), ctx.value(g.child_by_field_name("right"))
                if a is not None and b and a % b == 0:
                    continue
                yield Hit(l.node, f"the grid of {l.kernel} is {ctx.text(g)}: integer division drops the remainder, "
                                  f"so the last {ctx.text(g.child_by_field_name('left'))} % "
                                  f"{ctx.text(g.child_by_field_name('right'))} elements get no thread",
                          facts={"kernel": l.kernel, "grid": ctx.text(g)})


_MEM = {"cudaMalloc": 1, "cudaMemcpy": 2, "cudaMemcpyAsync": 2, "cudaMemset": 2, "cudaMallocManaged": 1,
        "cudaMemsetAsync": 2, "cudaMallocHost": 1}


@check("lint.cuda.memcpy-missing-sizeof")
def memcpy_missing_sizeof(ctx: CudaContext):
    for fn in cu.walk(ctx.src.root, ("function_definition",)):
        sized, bare = set(), []
        for c in cu.calls(fn, set(_MEM)):
            a = cu.call_args(c)
            i = _MEM[cu.callee(c)]
            if len(a) <= i:
                continue
            size = a[i]
            if any(n.type == "sizeof_expression" for n in cu.walk(size)):
                for n in cu.walk(size, ("binary_expression",)):
                    if ctx.text(n.child_by_field_name("operator")) == "*":
                        for side in (n.child_by_field_name("left"), n.child_by_field_name("right")):
                            if side.type != "sizeof_expression":
                                sized.add(ctx.text(side).replace(" ", ""))
            elif size.type in ("identifier", "binary_expression", "parenthesized_expression"):
                bare.append((c, size))
        for c, size in bare:
            if ctx.text(size).replace(" ", "") in sized:
                yield Hit(c, f"{cu.callee(c)} is given {ctx.text(size)} bytes, but the same count is multiplied by "
                             f"sizeof(...) elsewhere in this function: it moves {ctx.text(size)} bytes, not elements",
                          facts={"call": cu.callee(c), "size": ctx.text(size)},
                          fix=f"pass {ctx.text(size)} * sizeof(element) as the byte count")


@check("lint.cuda.unparsed-region")
def unparsed_region(ctx: CudaContext):
    errs = ctx.src.errors
    if not errs or not any(w in ctx.src.data for w in (b"__global__", b"__device__", b"<<<", b"__shared__")):
        return        # not CUDA code (a plain C++ header): nothing the rules would have read
    lines = sorted({ctx.src.loc(e)[0] for e in errs})
    shown = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
    yield Hit(errs[0], f"tree-sitter could not parse {len(errs)} region{'s' if len(errs) != 1 else ''} of this "
                       f"file (line{'s' if len(lines) != 1 else ''} {shown}): the rules did not read "
                       f"{'them' if len(errs) != 1 else 'it'}, so this file's findings may be incomplete",
              facts={"regions": len(errs), "lines": lines[:20]})


@check("lint.cuda.guard-off-by-one")
def guard_off_by_one(ctx: CudaContext):
    for k in ctx.kernels:
        fl = ctx.flow(k)
        sizes = {n for t, n in k.params if "*" not in t}
        for s in cu.walk(k.body, ("if_statement",)):
            cond = s.child_by_field_name("condition")
            cons = s.child_by_field_name("consequence")
            early = cons is not None and (cons.type == "return_statement" or any(
                c.type == "return_statement" for c in cons.named_children))
            for leaf in _leaves(cond):
                if leaf.type != "binary_expression":
                    continue
                op = ctx.text(leaf.child_by_field_name("operator"))
                l, r = leaf.child_by_field_name("left"), leaf.child_by_field_name("right")
                # the guard lets v == n through: `v <= n` / `n >= v` around the access, `v > n` / `n < v` to return early
                lets_equal = (op == "<=", op == ">=") if not early else (op == ">", op == "<")
                pair = (l, r) if lets_equal[0] else (r, l) if lets_equal[1] else None
                if pair is None or pair[0].type != "identifier" or pair[1].type != "identifier":
                    continue
                v, n = ctx.text(pair[0]), ctx.text(pair[1])
                if n not in sizes or not fl.is_global_index(v, leaf):
                    continue
                scope = cons if not early else k.body
                uses = [sub for sub in cu.walk(scope, ("subscript_expression",))
                        if (early and sub.start_byte > s.end_byte or not early)
                        and ctx.text(sub.child_by_field_name("argument")) in fl.pointer_params
                        and v in cu.identifiers(sub.child_by_field_name("indices"))]
                if uses:
                    yield Hit(leaf, f"`{ctx.text(leaf)}` in {k.name} lets {v} == {n} through to "
                                    f"{ctx.text(uses[0])}: one element past the end of an array of {n}",
                              facts={"kernel": k.name, "guard": ctx.text(leaf)}, also=[uses[0]],
                              fix=f"compare with < ({v} < {n}), or return when {v} >= {n}")
