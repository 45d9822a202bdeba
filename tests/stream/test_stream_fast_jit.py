"""The fast step's kernel is compiled once per function (issue 14's kernel, ``stream/_fastkernel.py``).

numba types a constant argument of a call between compiled functions (``lift(..., -1, False)``), or a
variable that starts at a constant (``na = 0`` ... ``local_search(na, ...)``) before its type is
unified, as a literal type and compiles the callee once more for that signature; the extra versions
cascade into the callee's own callees. Before this was fixed, ``local_search`` was compiled twice and
``lift`` six times: the cold compile took ~48 CPU-s instead of ~19 (docs/benchmarks.md). A cold compile
is too slow for the default suite, so the rule is checked on the source: no argument of a call to a
(non-inlined) compiled function of the kernel is a literal, or a local variable ever assigned one."""

from __future__ import annotations

import ast
from pathlib import Path

import tempanon.stream._fastkernel as fk

SOURCE = Path(fk.__file__)


def _decorator_names(fn: ast.FunctionDef) -> set[str]:
    return {d.id for d in fn.decorator_list if isinstance(d, ast.Name)}


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (bool, int))


def literal_arguments(source: str) -> list[str]:
    """``function:line: callee(argument)`` for every literal argument (or variable assigned a literal) of
    a call from one ``@jit`` function of ``source`` to another."""
    tree = ast.parse(source)
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    compiled = {f.name for f in funcs if _decorator_names(f) & {"jit", "jit_nonrt"}}
    out = []
    for f in funcs:
        if not _decorator_names(f) & {"jit", "jit_nonrt", "jit_inline"}:
            continue
        literal_vars = set()
        for node in ast.walk(f):
            if isinstance(node, ast.Assign) and _is_literal(node.value):
                literal_vars |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(f):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in compiled):
                continue
            for arg in node.args:
                if _is_literal(arg) or (isinstance(arg, ast.Name) and arg.id in literal_vars):
                    out.append(f"{f.name}:{node.lineno}: {node.func.id}({ast.unparse(arg)})")
    return out


def test_no_literal_arguments_between_compiled_functions():
    assert literal_arguments(SOURCE.read_text()) == []


def test_the_check_finds_both_kinds():
    src = (
        "@jit\ndef callee(a, b):\n    return a\n\n"
        "@jit\ndef caller(x):\n    na = 0\n    for i in range(x):\n        na += 1\n"
        "    k = np.int64(-1)\n    return callee(na, -1) + callee(k, False) + callee(k, x)\n"
    )
    assert literal_arguments(src) == ["caller:11: callee(na)", "caller:11: callee(-1)", "caller:11: callee(False)"]
