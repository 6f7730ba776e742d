"""A small, safe evaluator for the conditions and derived values of reasoning rules.

A rule's `when` and `let` are Python-looking expressions over fact names (`requested_bytes >
total_bytes`), parsed with `ast` and evaluated by walking the tree: only names, numbers, strings,
lists, arithmetic, comparisons, `and`/`or`/`not`, `in` and a few named functions are allowed, so a
rule file cannot run code. A name with no value makes the expression `Missing` (the rule does not
apply), except inside `first(...)`, which takes the first argument that has one.
"""
from __future__ import annotations

import ast
import functools
import math
import operator


class Missing(Exception):
    """A fact the expression needs is not known for this diagnosis."""


class ExprError(ValueError):
    """The expression is not one the evaluator accepts (reported when the rules load)."""


_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.Eq: operator.eq, ast.NotEq: operator.ne,
        ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_FUNCS = {"min": min, "max": max, "abs": abs, "ceil": math.ceil, "floor": math.floor, "log2": math.log2,
          "round": round, "len": len, "prod": math.prod, "int": int, "float": float, "str": str, "lower": lambda s: str(s).lower()}
_LAZY = {"first", "known"}       # take unevaluated arguments: a missing one is not an error
EXTRA = {"seen", "grab", "newest_cuda", "wheel"}   # supplied by the caller (diagnose.advice)


@functools.lru_cache(maxsize=1024)
def parse(text: str) -> ast.Expression:
    """The checked tree of an expression (cached: a rule's expressions are parsed once)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ExprError(f"not an expression: {text!r} ({e.msg})") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in set(_FUNCS) | _LAZY | EXTRA:
                raise ExprError(f"{text!r}: only the functions {', '.join(sorted(set(_FUNCS) | _LAZY | EXTRA))} may be called")
            if node.keywords:
                raise ExprError(f"{text!r}: keyword arguments are not allowed")
        elif not isinstance(node, (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub,
                                   ast.BinOp, ast.Compare, ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple,
                                   ast.IfExp, *_BIN, *_CMP)):
            raise ExprError(f"{text!r}: {type(node).__name__} is not allowed in a rule expression")
    return tree


def evaluate(tree: ast.Expression | str, names: dict, funcs: dict | None = None):
    """The value of the expression; raises Missing when a fact it needs is unknown.

    `funcs` adds the caller's functions (those named in EXTRA) to the built-in ones."""
    if isinstance(tree, str):
        tree = parse(tree)
    return _eval(tree.body, {**names, "__funcs__": {**_FUNCS, **(funcs or {})}})


def functions(funcs: dict | None = None) -> dict:
    """The functions an expression may call: the built-in ones and the caller's (for evaluate_in)."""
    return {**_FUNCS, **(funcs or {})}


def evaluate_in(tree: ast.Expression | str, scope: dict):
    """evaluate() over a scope that already holds the names and, under "__funcs__", functions():
    a caller evaluating many expressions over the same names builds it once."""
    if isinstance(tree, str):
        tree = parse(tree)
    return _eval(tree.body, scope)


def _eval(node, names):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in ("true", "True"):
            return True
        if node.id in ("false", "False"):
            return False
        if node.id not in names or names[node.id] is None:
            raise Missing(node.id)
        return names[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, names) for e in node.elts]
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_eval(v, names) for v in node.values)
        return any(_truthy(v, names) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, names)
        return (not value) if isinstance(node.op, ast.Not) else -value
    if isinstance(node, ast.IfExp):
        return _eval(node.body, names) if _eval(node.test, names) else _eval(node.orelse, names)
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, names), _eval(node.right, names)
        try:
            return _BIN[type(node.op)](left, right)
        except (TypeError, ZeroDivisionError, OverflowError):
            raise Missing(type(node).__name__) from None
    if isinstance(node, ast.Compare):
        left = _eval(node.left, names)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, names)
            try:
                if not _CMP[type(op)](left, right):
                    return False
            except TypeError:        # a string fact where a number was expected: the rule does not apply
                raise Missing(type(node).__name__) from None
            left = right
        return True
    if isinstance(node, ast.Call):
        name = node.func.id
        if name == "first":
            for arg in node.args:
                try:
                    return _eval(arg, names)
                except Missing:
                    continue
            raise Missing(type(node).__name__)
        if name == "known":
            try:
                for arg in node.args:
                    _eval(arg, names)
                return True
            except Missing:
                return False
        args = [_eval(a, names) for a in node.args]
        fn = names["__funcs__"].get(name)
        if fn is None:
            raise ExprError(f"the function {name}() is not available here")
        try:
            return fn(*args)
        except (TypeError, ValueError, OverflowError):
            raise Missing(type(node).__name__) from None
    raise ExprError(f"cannot evaluate {ast.unparse(node)!r}")   # pragma: no cover (parse() rejects it)


def _truthy(node, names) -> bool:
    try:
        return bool(_eval(node, names))
    except Missing:
        return False
