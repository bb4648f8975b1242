"""A calculator for the model: decimal arithmetic over the expression's syntax tree, no eval.

Only numbers, ``+ - * / // % **``, unary ``+``/``-`` and parentheses are allowed. Everything is
computed in Decimal (so ``0.1 + 0.2`` is exactly ``0.3``) with Python's meaning of ``//`` and
``%`` (floor), and sizes are bounded so that no expression can make the process spend
noticeable time or memory.
"""

from __future__ import annotations

import ast
import decimal
import operator
from collections.abc import Callable
from decimal import Decimal

MAX_LENGTH = 300
MAX_NODES = 200
MAX_EXPONENT = 100
MAX_MAGNITUDE = Decimal("1e30")
MAX_LITERAL_DIGITS = 31

_CONTEXT = decimal.Context(prec=34, rounding=decimal.ROUND_HALF_EVEN, Emax=999_999, Emin=-999_999)

_BINARY: dict[type[ast.operator], Callable[[Decimal, Decimal], Decimal]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: lambda a, b: _floor_div(a, b),
    ast.Mod: lambda a, b: a - b * _floor_div(a, b),
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Decimal], Decimal]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_ALLOWED = "numbers, + - * / // % ** and parentheses"


class CalculationError(ValueError):
    """An expression the calculator refuses or cannot compute; says what to change."""


def evaluate(expression: str) -> Decimal:
    """The exact (34 significant digits) value of an arithmetic ``expression``."""
    text = expression.strip()
    if not text:
        raise CalculationError(f"The expression is empty; write one using {_ALLOWED}.")
    if len(text) > MAX_LENGTH:
        raise CalculationError(
            f"The expression is {len(text)} characters long; the limit is {MAX_LENGTH}. "
            "Split it into smaller calculations."
        )
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CalculationError(
            f"{text!r} is not a valid arithmetic expression ({exc.msg}); use {_ALLOWED}, "
            "e.g. (199 - 20) * 0.95."
        ) from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculationError("The expression is too complex; split it into smaller parts.")
    with decimal.localcontext(_CONTEXT):
        try:
            return _eval(tree.body, text)
        except decimal.DivisionByZero:
            raise CalculationError("Division by zero; check the divisor.") from None
        except (decimal.InvalidOperation, decimal.Overflow) as exc:
            raise CalculationError(
                f"{text!r} has no finite real value ({type(exc).__name__}); e.g. 0/0, or a "
                "negative number to a fractional power."
            ) from None


def _eval(node: ast.expr, source: str) -> Decimal:
    if isinstance(node, ast.Constant):
        return _literal(node, source)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, source))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left, source), _eval(node.right, source)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        return _bounded(_BINARY[type(node.op)](left, right))
    raise CalculationError(_refusal(node, source))


def _literal(node: ast.Constant, source: str) -> Decimal:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalculationError(
            f"{ast.get_source_segment(source, node)!r} is not a number; only {_ALLOWED} "
            "are allowed."
        )
    text = (ast.get_source_segment(source, node) or repr(value)).replace("_", "")
    digits = sum(ch.isdigit() for ch in text.lower().split("e")[0])
    if digits > MAX_LITERAL_DIGITS:
        raise CalculationError(f"The number {text} has more than {MAX_LITERAL_DIGITS} digits.")
    return _bounded(Decimal(text))


def _floor_div(a: Decimal, b: Decimal) -> Decimal:
    """Python's floor division (Decimal's own ``//`` truncates toward zero)."""
    return (a / b).to_integral_value(rounding=decimal.ROUND_FLOOR)


def _check_power(base: Decimal, exponent: Decimal) -> None:
    if abs(exponent) > MAX_EXPONENT:
        raise CalculationError(
            f"Exponent {exponent} is too large; exponents must be between -{MAX_EXPONENT} and "
            f"{MAX_EXPONENT}."
        )
    if base.is_zero() and exponent < 0:
        raise decimal.DivisionByZero()


def _bounded(value: Decimal) -> Decimal:
    if abs(value) > MAX_MAGNITUDE:
        raise CalculationError(
            f"A value in the expression exceeds {MAX_MAGNITUDE:E} in magnitude; the calculator "
            "is for everyday amounts, not huge numbers."
        )
    return value


def _refusal(node: ast.expr, source: str) -> str:
    segment = ast.get_source_segment(source, node) or type(node).__name__
    if isinstance(node, ast.Name):
        what = f"{segment!r} is a name; replace it with its numeric value"
    elif isinstance(node, ast.Call):
        what = f"{segment!r} is a function call; function calls are not allowed"
    elif isinstance(node, ast.Attribute):
        what = f"{segment!r} is an attribute access; attributes are not allowed"
    else:
        what = f"{segment!r} ({type(node).__name__}) is not arithmetic"
    return f"{what}. The calculator accepts only {_ALLOWED}."


def to_plain(value: Decimal) -> str:
    """``value`` without exponent or trailing zeros: 2E+5 -> '200000', 1.50 -> '1.5'."""
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(_CONTEXT), "f")
