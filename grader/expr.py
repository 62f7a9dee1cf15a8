"""Integer expressions over a challenge's dimensions: buffer extents and the conditions cases must meet.

A challenge.yaml may size a buffer by `"input_size - kernel_size + 1"` and require `"kernel_size <=
input_size"`. The text is parsed once, at load, by Python's own parser into a tree, and only a small
closed set of nodes is accepted (whole numbers, the dimensions' names, + - * // %, min(), max(),
comparisons, and/or/not); anything else is a SpecError naming the file and key. Nothing is ever passed
to eval: a challenge file is trusted, but a typo in one must not run as code.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field
from typing import Callable

ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
COMPARISONS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
               ast.Eq: operator.eq, ast.NotEq: operator.ne}
FUNCTIONS = {"min": min, "max": max}
HINT = ("use whole numbers, the int parameters' names, + - * // % (// is integer division), min(...), max(...) "
        "and, in a condition, comparisons joined by and / or")


class ExpressionError(ValueError):
    """The text is not an expression this module accepts; the message says which part."""


@dataclass(frozen=True)
class Expression:
    text: str
    names: frozenset[str]
    """The dimensions it reads."""
    condition: bool
    """True for a condition (its value is true or false), False for an integer."""
    _evaluate: Callable[[dict[str, int]], int | bool] = field(repr=False, compare=False)

    def __call__(self, dims: dict[str, int]) -> int | bool:
        """The value at these dimensions; ZeroDivisionError where a // or % divides by zero."""
        return self._evaluate(dims)

    def __str__(self) -> str:
        return self.text


def parse(text: str, known: set[str] | frozenset[str], condition: bool = False) -> Expression:
    """`text` as an integer expression (or, with `condition`, a true/false one) over the names in `known`."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ExpressionError(f"{text!r} is not an expression ({exc.msg})") from exc
    names: set[str] = set()
    evaluate = _compile(tree, known, names)
    if _is_condition(tree) != condition:
        want = "a condition such as 'K <= N'" if condition else "a whole-number expression, not a condition"
        raise ExpressionError(f"{text!r} is not {want}")
    return Expression(text.strip(), frozenset(names), condition, evaluate)


def _is_condition(tree: ast.AST) -> bool:
    return isinstance(tree, (ast.Compare, ast.BoolOp)) or isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not)


def _compile(node: ast.AST, known, names: set[str]) -> Callable[[dict[str, int]], int | bool]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        value = node.value
        return lambda dims: value
    if isinstance(node, ast.Name):
        if node.id not in known:
            raise ExpressionError(f"{node.id!r} is not an int parameter" + (f" (int parameters: {', '.join(sorted(known))})"
                                                                            if known else ""))
        names.add(node.id)
        name = node.id
        return lambda dims: dims[name]
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        op, left, right = ARITHMETIC[type(node.op)], _compile(node.left, known, names), _compile(node.right, known, names)
        return lambda dims: op(left(dims), right(dims))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        inner = _compile(node.operand, known, names)
        return (lambda dims: -inner(dims)) if isinstance(node.op, ast.USub) else (lambda dims: not inner(dims))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS \
            and node.args and not node.keywords:
        function, args = FUNCTIONS[node.func.id], [_compile(a, known, names) for a in node.args]
        return lambda dims: function(a(dims) for a in args) if len(args) > 1 else args[0](dims)
    if isinstance(node, ast.Compare) and all(type(op) in COMPARISONS for op in node.ops):
        parts = [_compile(node.left, known, names)] + [_compile(c, known, names) for c in node.comparators]
        ops = [COMPARISONS[type(op)] for op in node.ops]
        return lambda dims: all(op(parts[i](dims), parts[i + 1](dims)) for i, op in enumerate(ops))
    if isinstance(node, ast.BoolOp):
        parts = [_compile(v, known, names) for v in node.values]
        join = all if isinstance(node.op, ast.And) else any
        return lambda dims: join(p(dims) for p in parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        raise ExpressionError("'/' is not allowed: extents are whole numbers, write // for integer division")
    raise ExpressionError(f"{ast.unparse(node)!r} is not allowed here; {HINT}")
