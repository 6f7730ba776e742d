"""What the CUDA rules share about one file: constants (#define, const/constexpr ints, dim3
variables), kernels and what each of their variables holds (thread-dependent, global index),
launches and what their configurations evaluate to."""
from __future__ import annotations

import re
from functools import cached_property

from diagnose.source import cuda as cu

_NUM = re.compile(r"^(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)$")
SIZEOF = {"float": 4, "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4, "double": 8,
          "long": 8, "long long": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8, "half": 2, "__half": 2,
          "__nv_bfloat16": 2, "nv_bfloat16": 2, "short": 2, "char": 1, "unsigned char": 1, "int8_t": 1,
          "uint8_t": 1, "float2": 8, "float4": 16, "int4": 16, "double2": 16, "half2": 4, "__half2": 4}
WIDE = {"size_t", "int64_t", "uint64_t", "long", "long long", "unsigned long", "unsigned long long", "ptrdiff_t",
        "long int", "long long int", "ssize_t", "index_t"}
NARROW = {"int", "unsigned", "unsigned int", "int32_t", "uint32_t", "short", "const int", "const unsigned int"}
BUILTIN_THREAD = "threadIdx"


def strip_type(t: str) -> str:
    t = re.sub(r"\b(const|volatile|__restrict__|restrict|static|register|constexpr)\b", " ", t)
    return " ".join(t.replace("*", " ").replace("&", " ").split())


class CudaContext:
    def __init__(self, src: cu.CudaSource, target: str, tinfo: dict, all_targets: dict):
        self.src, self.target, self.tinfo, self.targets = src, target, tinfo, all_targets

    def text(self, node) -> str:
        return self.src.text(node)

    @cached_property
    def kernels(self) -> list[cu.Kernel]:
        return cu.kernels(self.src)

    @cached_property
    def launches(self) -> list[cu.Launch]:
        return cu.launches(self.src)

    @cached_property
    def consts(self) -> dict[str, object]:
        """NAME -> its defining expression node: `#define NAME expr`, `const int NAME = expr`."""
        out: dict[str, object] = {}
        dup = set()
        for n in cu.walk(self.src.root, ("preproc_def", "declaration")):
            if n.type == "preproc_def":
                name, val = n.child_by_field_name("name"), n.child_by_field_name("value")
                if name is not None and val is not None:
                    out[self.text(name)] = val
                continue
            t = self.text(n)
            if not re.match(r"\s*(static\s+)?(const|constexpr)\b", t) and "const " not in t.split("=")[0]:
                continue
            for d in n.children_by_field_name("declarator"):
                if d.type == "init_declarator":
                    nm, v = d.child_by_field_name("declarator"), d.child_by_field_name("value")
                    if nm is not None and nm.type == "identifier" and v is not None:
                        key = self.text(nm)
                        if key in out:
                            dup.add(key)
                        out[key] = v
        for k in dup:
            out.pop(k, None)
        return out

    def value(self, node, depth: int = 0):
        """The integer a constant expression evaluates to (literals, #defines, const ints, sizeof of
        known types, + - * / % << >>, parentheses, casts), else None."""
        if node is None or depth > 20:
            return None
        t = node.type
        if t == "number_literal":
            m = _NUM.match(self.text(node).strip())
            return int(m.group(1), 0) if m else None
        if t == "preproc_arg":
            s = self.text(node).strip()
            m = _NUM.match(s)
            if m:
                return int(m.group(1), 0)
            try:    # a #define's body: parse it as an expression
                sub = cu.parser().parse(f"int __v = {s};".encode())
                decl = next(cu.walk(sub.root_node, ("init_declarator",)), None)
                v = decl.child_by_field_name("value") if decl is not None else None
                return _SubCtx(self, sub, f"int __v = {s};".encode()).value(v, depth + 1) if v is not None else None
            except Exception:   # noqa: BLE001 - an odd macro body is simply not a constant
                return None
        if t in ("parameter_declaration", "type_identifier") and node.named_child_count <= 1:
            name = self.text(node).strip()       # a vexing-parse "parameter" that is a constant's name
            v = self.consts.get(name)
            return self.value(v, depth + 1) if v is not None else None
        if t == "identifier":
            v = self.consts.get(self.text(node))
            if v is None:             # `int want = 300 * 1024;` set once in this function
                v = self.local_consts(cu.enclosing(node, ("function_definition",))).get(self.text(node))
            return self.value(v, depth + 1) if v is not None else None
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children if c.type != "comment"]
            return self.value(inner[0], depth + 1) if inner else None
        if t == "cast_expression":
            return self.value(node.child_by_field_name("value"), depth + 1)
        if t == "sizeof_expression":
            ty = node.child_by_field_name("type")
            return SIZEOF.get(strip_type(self.text(ty))) if ty is not None else None
        if t == "binary_expression":
            a = self.value(node.child_by_field_name("left"), depth + 1)
            b = self.value(node.child_by_field_name("right"), depth + 1)
            op = self.text(node.child_by_field_name("operator"))
            if a is None or b is None:
                return None
            try:
                return {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else None, "%": a % b if b else None,
                        "<<": a << b if 0 <= b < 64 else None, ">>": a >> b if 0 <= b < 64 else None}.get(op)
            except (ValueError, OverflowError):
                return None
        return None

    def local_consts(self, fn) -> dict:
        """Names a function declares once with an initial value and never assigns again."""
        if fn is None:
            return {}
        cache = self.__dict__.setdefault("_local_consts", {})
        if fn.start_byte in cache:
            return cache[fn.start_byte]
        inits: dict[str, list] = {}
        for d in cu.walk(fn, ("init_declarator",)):
            nm, v = d.child_by_field_name("declarator"), d.child_by_field_name("value")
            if nm is not None and nm.type == "identifier" and v is not None and v.type not in (
                    "argument_list", "initializer_list"):
                inits.setdefault(self.text(nm), []).append(v)
        changed = set()
        for a in cu.walk(fn, ("assignment_expression", "update_expression", "pointer_expression")):
            target = a.child_by_field_name("left") or a.child_by_field_name("argument")
            if target is not None and target.type == "identifier":
                changed.add(self.text(target))
        out = {k: v[0] for k, v in inits.items() if len(v) == 1 and k not in changed}
        cache[fn.start_byte] = out
        return out

    def dims(self, node, scope) -> list | None:
        """A launch's grid or block as a list of nodes per axis: `256` -> [256], a dim3 variable or
        `dim3(16, 16)` -> its arguments."""
        if node is None:
            return None
        if node.type == "call_expression" and cu.callee(node) == "dim3":
            return cu.call_args(node)
        if node.type == "identifier" and scope is not None:
            name = self.text(node)
            for d in cu.walk(scope, ("declaration",)):
                if "dim3" not in self.text(d.child_by_field_name("type")):
                    continue
                for dec in d.children_by_field_name("declarator"):
                    if dec.type == "init_declarator" and self.text(dec.child_by_field_name("declarator")) == name:
                        v = dec.child_by_field_name("value")
                        if v is None:
                            return None
                        if v.type in ("argument_list", "initializer_list"):
                            return [c for c in v.named_children if c.type != "comment"]
                        return self.dims(v, scope)
                    if dec.type == "function_declarator" and self.text(dec.child_by_field_name("declarator")) == name:
                        # `dim3 block(TILE, TILE);` parses as a declaration of a function (C++'s vexing parse)
                        params = dec.child_by_field_name("parameters")
                        return [c for c in params.named_children if c.type != "comment"] if params is not None else None
                    if dec.type == "identifier" and self.text(dec) == name:
                        return None
            return [node]
        return [node]

    def enclosing_function(self, node):
        return cu.enclosing(node, ("function_definition",))

    def flow(self, k: cu.Kernel) -> "KernelFlow":
        cache = self.__dict__.setdefault("_flows", {})
        if k.name not in cache:
            cache[k.name] = KernelFlow(self, k)
        return cache[k.name]

    def launches_of(self, name: str) -> list[cu.Launch]:
        return [l for l in self.launches if l.kernel == name or l.kernel.endswith("::" + name)]


class _SubCtx(CudaContext):
    """Evaluates an expression parsed apart (a #define's body) with the file's constants."""

    def __init__(self, parent, tree, data):
        self._parent, self._data = parent, data
        self.src = cu.CudaSource(path="<macro>", data=data, tree=tree, lines=[])

    @cached_property
    def consts(self):
        return {}

    def value(self, node, depth=0):
        if node is not None and node.type == "identifier":
            return self._parent.value(self._parent.consts.get(self.text(node)), depth + 1) \
                if self.text(node) in self._parent.consts else None
        return super().value(node, depth)


def is_builtin(node, base: str, field: str | None = None) -> bool:
    """node is `base.field` (threadIdx.x) or, with field None, `base.<any>`."""
    if node.type != "field_expression":
        return False
    arg, fld = node.child_by_field_name("argument"), node.child_by_field_name("field")
    return arg is not None and arg.text == base.encode() and (field is None or (fld is not None and fld.text == field.encode()))


def mentions(node, base: str, field: str | None = None) -> bool:
    return any(is_builtin(n, base, field) for n in cu.walk(node, ("field_expression",)))


class KernelFlow:
    """The variables of one kernel: their values, declared types, and which are thread-dependent
    (from threadIdx) or global indices (blockIdx with threadIdx)."""

    def __init__(self, ctx: CudaContext, k: cu.Kernel):
        self.ctx, self.k = ctx, k
        self.values: dict[str, list] = {}
        self.types: dict[str, str] = {}
        self.decl_node: dict[str, object] = {}
        for t, n in k.params:
            self.types[n] = t
        self.pointer_params = {n for t, n in k.params if "*" in t}
        self.wide_params = {n for t, n in k.params if strip_type(t) in WIDE}
        for d in cu.walk(k.body, ("declaration",)):
            ty = ctx.text(d.child_by_field_name("type"))
            for dec in d.children_by_field_name("declarator"):
                if dec.type == "init_declarator":
                    nm = dec.child_by_field_name("declarator")
                    if nm is not None and nm.type == "identifier":
                        name = ctx.text(nm)
                        self.types.setdefault(name, ty)
                        self.decl_node.setdefault(name, d)
                        v = dec.child_by_field_name("value")
                        if v is not None:
                            self.values.setdefault(name, []).append(v)
        for a in cu.walk(k.body, ("assignment_expression",)):
            left = a.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                self.values.setdefault(ctx.text(left), []).append(a.child_by_field_name("right"))
        self.thread_dep = self._closure(lambda v: mentions(v, "threadIdx"))
        self.block_dep = self._closure(lambda v: mentions(v, "blockIdx"))
        self.global_index = {n for n in self.thread_dep if n in self.block_dep}
        self.shared = self._shared_arrays()
        self._scoped()

    # A loop variable declared in a for statement (`for (int i = 0; ...)`) is its own variable:
    # another `i` elsewhere in the kernel (`for (int i = threadIdx.x; ...)`) must not make it
    # thread-dependent. Keys: a name (function scope) or (name, start byte of its for statement).
    def _scoped(self):
        ctx = self.ctx
        self.for_decls: dict[int, set] = {}
        for f in cu.walk(self.k.body, ("for_statement",)):
            init = f.child_by_field_name("initializer")
            if init is not None and init.type == "declaration":
                names = {ctx.text(d.child_by_field_name("declarator")) for d in init.children_by_field_name("declarator")
                         if d.type == "init_declarator"}
                self.for_decls[f.start_byte] = names
        kvals: dict[object, list] = {}
        for d in cu.walk(self.k.body, ("init_declarator",)):
            nm = d.child_by_field_name("declarator")
            if nm is not None and nm.type == "identifier":
                kvals.setdefault(self.key(ctx.text(nm), d), []).append(d.child_by_field_name("value"))
        for a in cu.walk(self.k.body, ("assignment_expression",)):
            left = a.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                kvals.setdefault(self.key(ctx.text(left), a), []).append(a.child_by_field_name("right"))
        self.kvals = kvals

        def closure(base):
            out = set()
            for _ in range(10):
                changed = False
                for key, vals in kvals.items():
                    if key in out:
                        continue
                    for v in vals:
                        if v is not None and (base(v) or any(self.key(ctx.text(i), i) in out
                                                             for i in cu.walk(v, ("identifier",)))):
                            out.add(key)
                            changed = True
                            break
                if not changed:
                    break
            return out
        self.kthread = closure(lambda v: mentions(v, "threadIdx"))
        self.kblock = closure(lambda v: mentions(v, "blockIdx"))

    def key(self, name: str, at):
        """The variable `name` means at node `at`: the innermost for statement declaring it, else the kernel's."""
        if self.for_decls:
            for a in cu.ancestors(at):
                if a.type == "for_statement" and name in self.for_decls.get(a.start_byte, ()):
                    return (name, a.start_byte)
        return name

    def thread_dependent(self, node) -> bool:
        """node reads threadIdx, or a variable (resolved at its place) computed from it."""
        return mentions(node, "threadIdx") or any(self.key(self.ctx.text(i), i) in self.kthread
                                                  for i in cu.walk(node, ("identifier",)))

    def is_global_index(self, name: str, at) -> bool:
        k = self.key(name, at)
        return k in self.kthread and k in self.kblock

    def _closure(self, base) -> set[str]:
        out = set()
        for _ in range(10):
            changed = False
            for name, vals in self.values.items():
                if name in out:
                    continue
                if any(v is not None and (base(v) or cu.identifiers(v) & out) for v in vals):
                    out.add(name)
                    changed = True
            if not changed:
                break
        return out

    def sources(self, names: set[str]) -> set[str]:
        """names and every variable their values read, transitively."""
        out, todo = set(), list(names)
        while todo:
            n = todo.pop()
            if n in out:
                continue
            out.add(n)
            for v in self.values.get(n, []):
                if v is not None:
                    todo.extend(cu.identifiers(v) - out)
        return out

    def _shared_arrays(self) -> dict:
        """name -> (element type, [dim nodes], declaration node, extern)."""
        out = {}
        for d in cu.walk(self.k.body, ("declaration",)):
            quals = {self.ctx.text(c) for c in d.children if c.type in ("type_qualifier", "storage_class_specifier")}
            if "__shared__" not in quals:
                continue
            ty = strip_type(self.ctx.text(d.child_by_field_name("type")))
            for dec in d.children_by_field_name("declarator"):
                dims = []
                n = dec
                while n is not None and n.type == "array_declarator":
                    dims.append(n.child_by_field_name("size"))
                    n = n.child_by_field_name("declarator")
                if n is not None and n.type == "identifier":
                    out[self.ctx.text(n)] = (ty, list(reversed(dims)), d, "extern" in quals)
        return out
