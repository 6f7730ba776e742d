"""Python kernel source (Triton, Pallas, NKI) parsed with the standard `ast`.

    src = parse("kernel.py")              # PySource; SourceError if it does not parse
    for fn in jit_functions(src.tree, ("triton.jit", "jit")):
        for call in calls(fn, ("tl.load", "tl.store")):
            line, col = src.loc(call)      # 1-based
            mask = keyword(call, "mask")

Names are matched on their dotted spelling (`tl.load`, `triton.language.load`, `nl.load`) after the
file's import aliases are resolved (`import triton.language as tl` makes `tl.load` also answer to
`triton.language.load`): `resolve(src, "tl.load")` gives the canonical name.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from diagnose.source import SourceError, read_bytes


@dataclass
class PySource:
    path: str
    text: str
    tree: ast.Module
    lines: list[str]
    aliases: dict = field(default_factory=dict)   # local name -> module path ("tl" -> "triton.language")
    _parents: dict | None = field(default=None, repr=False)
    _blines: list | None = field(default=None, repr=False)

    def line(self, n: int) -> str:
        """The text of 1-based line n ('' past the end)."""
        return self.lines[n - 1] if 0 < n <= len(self.lines) else ""

    def loc(self, node) -> tuple[int, int]:
        """1-based (line, column) of a node; the column counts characters, not bytes."""
        line = getattr(node, "lineno", 1)
        off = getattr(node, "col_offset", 0)
        raw = self.line(line).encode("utf-8")[:off]
        return line, len(raw.decode("utf-8", "replace")) + 1

    def segment(self, node) -> str:
        """The source text of a node (ast.get_source_segment without re-splitting the file each call)."""
        l0, l1 = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        c0, c1 = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if None in (l0, l1, c0, c1) or not (0 < l0 <= l1 <= len(self.lines)):
            return ""
        if self._blines is None:
            self._blines = [ln.encode("utf-8") for ln in self.lines]
        if l0 == l1:
            return self._blines[l0 - 1][c0:c1].decode("utf-8", "replace")
        parts = [self._blines[l0 - 1][c0:]] + self._blines[l0:l1 - 1] + [self._blines[l1 - 1][:c1]]
        return b"\n".join(parts).decode("utf-8", "replace")

    def parent(self, node):
        if self._parents is None:
            par = {}
            for p in nodes(self.tree):
                for f in p._fields:
                    v = getattr(p, f, None)
                    if isinstance(v, list):
                        for c in v:
                            if isinstance(c, ast.AST):
                                par[c] = p
                    elif isinstance(v, ast.AST):
                        par[v] = p
            self._parents = par
        return self._parents.get(node)

    def ancestors(self, node) -> Iterator[ast.AST]:
        p = self.parent(node)
        while p is not None:
            yield p
            p = self.parent(p)

    def resolve(self, name: str | None) -> str | None:
        """A dotted name with its first part replaced by what the file imported it as."""
        if not name:
            return name
        head, _, rest = name.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return name
        return f"{full}.{rest}" if rest else full


def parse(path, data: bytes | None = None) -> PySource:
    raw = read_bytes(path) if data is None else data
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SourceError(f"{path}: not UTF-8 text (byte {e.start}); save the file as UTF-8") from None
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as e:
        raise SourceError(f"{path}:{e.lineno}:{e.offset}: Python syntax error: {e.msg}; "
                          "lint reads only files that parse") from None
    except (ValueError, RecursionError) as e:
        raise SourceError(f"{path}: cannot be parsed as Python ({e})") from None
    src = PySource(path=str(path), text=text, tree=tree, lines=text.splitlines())
    src.aliases = import_aliases(tree)
    return src


def import_aliases(tree: ast.AST) -> dict:
    """local name -> full dotted name, from `import a.b as c` and `from a import b as c`."""
    out = {}
    for node in nodes(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    out.setdefault(a.name.split(".")[0], a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def nodes(node) -> list:
    """Every node under node (itself included), listed once and kept on the node: the helpers below
    walk the same function many times."""
    got = getattr(node, "_src_nodes", None)
    if got is None:
        got, todo = [], [node]
        while todo:                   # ast.walk without its generators (a third of the time)
            n = todo.pop()
            got.append(n)
            for f in n._fields:
                v = getattr(n, f, None)
                if isinstance(v, list):
                    todo.extend(c for c in v if isinstance(c, ast.AST))
                elif isinstance(v, ast.AST):
                    todo.append(v)
        try:
            node._src_nodes = got
        except AttributeError:       # not an ast node
            pass
    return got


def _memo(node, key, make):
    got = getattr(node, key, None)
    if got is None:
        got = make()
        try:
            setattr(node, key, got)
        except AttributeError:
            pass
    return got


def dotted(node) -> str | None:
    """`a.b.c` for a Name/Attribute chain, the callee's for a Call, else None."""
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _matches(name: str | None, names: Iterable[str], src: PySource | None) -> bool:
    if name is None:
        return False
    full = src.resolve(name) if src is not None else name
    return name in names or full in names


def calls(node, names: Iterable[str] | None = None, src: PySource | None = None) -> Iterator[ast.Call]:
    """Every Call under node (in source order), or those whose callee is one of names
    (spelled as written, or resolved through src's imports)."""
    names = set(names) if names is not None else None
    found = _memo(node, "_src_calls", lambda: sorted((n for n in nodes(node) if isinstance(n, ast.Call)),
                                                     key=lambda n: (n.lineno, n.col_offset)))
    for n in found:
        if names is None or _matches(dotted(n.func), names, src):
            yield n


def keyword(call: ast.Call, name: str):
    """The value of keyword argument name, or None."""
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def arg(call: ast.Call, index: int, name: str | None = None):
    """Positional argument index, or keyword name: the value node or None."""
    if name is not None:
        v = keyword(call, name)
        if v is not None:
            return v
    return call.args[index] if len(call.args) > index else None


def subscripts(node) -> Iterator[ast.Subscript]:
    for n in nodes(node):
        if isinstance(n, ast.Subscript):
            yield n


def names_in(node) -> set[str]:
    """Every bare name read under node."""
    return _memo(node, "_src_names", lambda: frozenset(n.id for n in nodes(node) if isinstance(n, ast.Name)))


def functions(tree) -> Iterator[ast.FunctionDef]:
    for n in nodes(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield n


def decorator_names(fn) -> list[str]:
    """The dotted names of a function's decorators (`triton.jit`, `triton.autotune`, `nki.jit`)."""
    out = []
    for d in fn.decorator_list:
        name = dotted(d.func if isinstance(d, ast.Call) else d)
        if name:
            out.append(name)
    return out


def jit_functions(tree, names: Iterable[str], src: PySource | None = None) -> list[ast.FunctionDef]:
    """Functions decorated with one of names (as written or resolved through src's imports)."""
    names = set(names)
    return [fn for fn in functions(tree) if any(_matches(d, names, src) for d in decorator_names(fn))]


def assignments(fn) -> dict[str, list[ast.expr]]:
    """name -> the values assigned to it in fn (plain `x = ...`, tuple targets, `x += ...` as a BinOp).
    Computed once per function (kept on the node)."""
    return _memo(fn, "_src_assigns", lambda: _assignments(fn))


def _assignments(fn) -> dict[str, list[ast.expr]]:
    out: dict[str, list[ast.expr]] = {}
    for n in nodes(fn):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(n.value)
                elif isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple) and len(t.elts) == len(n.value.elts):
                    for a, v in zip(t.elts, n.value.elts):
                        if isinstance(a, ast.Name):
                            out.setdefault(a.id, []).append(v)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value is not None:
            out.setdefault(n.target.id, []).append(n.value)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            out.setdefault(n.target.id, []).append(ast.BinOp(left=ast.Name(n.target.id), op=n.op, right=n.value))
    return out


def params(fn) -> list[str]:
    a = fn.args
    return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]


def constexpr_params(fn) -> set[str]:
    """Parameters annotated `tl.constexpr` / `constexpr`, or the string "tl.constexpr"."""
    out = set()
    for x in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        a = x.annotation
        spelled = a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else dotted(a) if a is not None else None
        if spelled and spelled.strip().endswith("constexpr"):
            out.add(x.arg)
    return out


def literal(node):
    """The Python value of a constant expression (numbers, tuples, unary minus), else None."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
