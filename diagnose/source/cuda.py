"""CUDA C++ source parsed with tree-sitter and the tree-sitter-cuda grammar (PyPI).

    src = parse("saxpy.cu")                    # CudaSource; SourceError if unreadable
    for k in kernels(src):                     # __global__ functions, templates included
        for sub in walk(k.body, ("subscript_expression",)):
            line, col = src.loc(sub)           # 1-based
    for launch in launches(src):               # kernel<<<grid, block, smem, stream>>>(args)
        print(launch.kernel, src.text(launch.grid), src.text(launch.block))

tree-sitter recovers from what it cannot parse (a macro it cannot expand) with ERROR nodes;
`src.errors` lists them so a reader can say which regions it did not understand.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from diagnose.source import SourceError, read_bytes

_PARSER = None


def parser():
    """The tree-sitter parser for CUDA (made once; tree_sitter is imported lazily)."""
    global _PARSER
    if _PARSER is None:
        try:
            import tree_sitter
            import tree_sitter_cuda
        except ImportError as e:
            raise SourceError(f"CUDA sources need tree-sitter and tree-sitter-cuda ({e.name} is not installed): "
                              "pip install tree-sitter tree-sitter-cuda") from None
        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
    return _PARSER


@dataclass
class CudaSource:
    path: str
    data: bytes
    tree: object
    lines: list[str]
    errors: list = field(default_factory=list)    # ERROR / MISSING nodes tree-sitter recovered from

    @property
    def root(self):
        return self.tree.root_node

    def text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace") if node is not None else ""

    def line(self, n: int) -> str:
        return self.lines[n - 1] if 0 < n <= len(self.lines) else ""

    def loc(self, node) -> tuple[int, int]:
        """1-based (line, column) of a node's start; the column counts characters, not bytes."""
        row, byte_col = node.start_point
        start = node.start_byte - byte_col
        return row + 1, len(self.data[start:node.start_byte].decode("utf-8", "replace")) + 1


def parse(path, data: bytes | None = None) -> CudaSource:
    raw = read_bytes(path) if data is None else data
    if b"\0" in raw[:8192]:
        raise SourceError(f"{path}: binary data, not CUDA source")
    tree = parser().parse(raw)
    _index(tree)
    text = raw.decode("utf-8", "replace")
    src = CudaSource(path=str(path), data=raw, tree=tree, lines=text.splitlines())
    if tree.root_node.has_error:
        src.errors = [n for n in walk(tree.root_node) if n.type == "ERROR" or n.is_missing]
    return src


# Each parsed file's nodes listed once in source order (a subtree is a slice of it): walking a
# subtree again costs a slice, not a traversal that makes every Node anew. Kept for the last few
# files parsed (their trees pinned while indexed, so node ids cannot be reused meanwhile).
_INDEXED: "OrderedDict[int, tuple]" = OrderedDict()
_POS: dict[int, tuple] = {}
_KEEP = 4


def _index(tree) -> None:
    flat, kinds = [], []
    cur = tree.walk()                 # a cursor: 3-4x faster than walking .children
    open_ = []                        # (node id, index) of the nodes whose subtree is being listed
    while True:
        n = cur.node
        i = len(flat)
        flat.append(n)
        kinds.append(n.type)
        if cur.goto_first_child():
            open_.append((n.id, i))
            continue
        _POS[n.id] = (flat, kinds, i, i + 1)
        done = False
        while not cur.goto_next_sibling():
            if not cur.goto_parent():
                done = True
                break
            nid, start = open_.pop()
            _POS[nid] = (flat, kinds, start, len(flat))
        if done:
            break
    _INDEXED[id(tree)] = (tree, [n.id for n in flat])
    while len(_INDEXED) > _KEEP:
        _, (_, ids) = _INDEXED.popitem(last=False)
        for i in ids:
            _POS.pop(i, None)


def walk(node, types: Iterable[str] | None = None) -> Iterator:
    """Nodes under node (itself included) in source order, or only those of the given types."""
    types = set(types) if types is not None else None
    hit = _POS.get(node.id)
    if hit is not None and hit[0][hit[2]] == node:
        flat, kinds, i, end = hit
        if types is None:
            yield from flat[i:end]
        else:
            for j in range(i, end):
                if kinds[j] in types:
                    yield flat[j]
        return
    stack = [node]
    while stack:
        n = stack.pop()
        if types is None or n.type in types:
            yield n
        stack.extend(reversed(n.children))


def ancestors(node) -> Iterator:
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


def callee(call) -> str:
    """The called name of a call_expression: `f`, `ns::f`, `obj.f`; a template's base name (`k<T>` -> `k`)."""
    fn = call.child_by_field_name("function")
    if fn is None:
        return ""
    if fn.type == "template_function":
        fn = fn.child_by_field_name("name") or fn
    return fn.text.decode("utf-8", "replace") if fn.text is not None else ""


def call_args(call) -> list:
    """The argument nodes of a call_expression (not the `<<<...>>>` configuration)."""
    a = call.child_by_field_name("arguments")
    if a is None:
        return []
    return [c for c in a.named_children if c.type != "comment"]


def calls(node, names: Iterable[str] | None = None) -> Iterator:
    """call_expression nodes under node, or those whose callee is one of names."""
    names = set(names) if names is not None else None
    for c in walk(node, ("call_expression",)):
        if names is None or callee(c) in names:
            yield c


@dataclass
class Kernel:
    name: str
    node: object                  # the function_definition
    body: object                  # its compound_statement
    params: list[tuple[str, str]]   # (type text, name) in order
    template: object | None = None  # the enclosing template_declaration, if any


def _declarator_name(decl) -> str:
    """The identifier a (possibly pointer/reference/array) declarator declares."""
    n = decl
    while n is not None and n.type not in ("identifier", "field_identifier", "qualified_identifier",
                                             "destructor_name", "operator_name"):
        n = n.child_by_field_name("declarator") or (n.named_children[0] if n.named_children else None)
    return n.text.decode("utf-8", "replace") if n is not None else ""


def function_qualifiers(fn) -> set[str]:
    """CUDA qualifiers on a function_definition: '__global__', '__device__', '__host__', ..."""
    return {c.type for c in fn.children if c.type.startswith("__") and c.type.endswith("__")}


def kernels(src: CudaSource, qualifiers: Iterable[str] = ("__global__",)) -> list[Kernel]:
    """The functions carrying one of qualifiers (default: `__global__` kernels), in source order."""
    want = set(qualifiers)
    out = []
    for fn in walk(src.root, ("function_definition",)):
        if not (function_qualifiers(fn) & want):
            continue
        decl = fn.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        if decl is None:
            continue
        name = _declarator_name(decl.child_by_field_name("declarator"))
        ps = []
        plist = decl.child_by_field_name("parameters")
        for p in (plist.named_children if plist is not None else []):
            if p.type != "parameter_declaration":
                continue
            d = p.child_by_field_name("declarator")
            pname = _declarator_name(d) if d is not None else ""
            ptype = src.text(p)
            if d is not None:
                ptype = src.data[p.start_byte:d.start_byte].decode("utf-8", "replace").strip()
                ptype += " " + "".join(ch for ch in src.text(d) if ch in "*&").strip()
            ps.append((ptype.strip(), pname))
        tmpl = fn.parent if fn.parent is not None and fn.parent.type == "template_declaration" else None
        out.append(Kernel(name=name, node=fn, body=fn.child_by_field_name("body"), params=ps, template=tmpl))
    return out


@dataclass
class Launch:
    kernel: str
    node: object                 # the call_expression
    config: list                 # the <<<...>>> expressions: grid, block[, shared bytes[, stream]]
    args: list                   # the kernel's arguments

    @property
    def grid(self):
        return self.config[0] if self.config else None

    @property
    def block(self):
        return self.config[1] if len(self.config) > 1 else None

    @property
    def shared_bytes(self):
        return self.config[2] if len(self.config) > 2 else None

    @property
    def stream(self):
        return self.config[3] if len(self.config) > 3 else None


def launches(src: CudaSource, node=None) -> list[Launch]:
    """Every `kernel<<<...>>>(...)` launch under node (default: the whole file), in source order."""
    out = []
    for c in walk(node if node is not None else src.root, ("call_expression",)):
        cfg = next((ch for ch in c.children if ch.type == "kernel_call_syntax"), None)
        if cfg is None:
            continue
        out.append(Launch(kernel=callee(c), node=c,
                          config=[ch for ch in cfg.named_children if ch.type != "comment"], args=call_args(c)))
    return out


def enclosing(node, types: Iterable[str]):
    """The nearest ancestor of one of types, or None."""
    types = set(types)
    for a in ancestors(node):
        if a.type in types:
            return a
    return None


def identifiers(node) -> set[str]:
    """Every identifier's text under node."""
    return {n.text.decode("utf-8", "replace") for n in walk(node, ("identifier",))}
