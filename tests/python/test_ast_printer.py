"""The C++ printer against Python's ast.unparse: same text, and the text parses back to the same tree."""

from __future__ import annotations

import ast

import pytest

from htp import _htp
from htp._ast_json import dumps, to_json

CASES = [
    # precedence and parentheses
    "a + b * c - (d - e) ** -f ** g",
    "(-a) ** b, -a ** b, not a == b, (not a) == b, ~a | b ^ c & d << e >> f",
    "a or b and not c or (d or e) and f",
    "a < b <= c != (d < e), a is not b, c not in d",
    "def g():\n    (yield), (yield x)\n    x = yield y\n    z = lambda: (yield from z)\n    await_ = await x",
    "x = (a, b), [c, d], (e,), ()",
    "f(*a, *b, k=1, **c, **d)[1:2, ::3, 4][...]",
    "a[b:c, d][e, f][(g, h)][()]",
    "lambda x, /, y=1, *a, z, w=2, **k: (x, y)",
    "lambda: (a if b else c) if (d if e else f) else g",
    "x = a if b else (c if d else e)",
    "(a := 1), [y := 2, z := 3], f(w := 4)",
    "print(*(a, b), *[c] + d)",
    "{**a, 'b': 1, **{'c': 2}}, {*()}, {1, 2}",
    "[x for x in y if x for z in w], (x async for x in y), {k: v for k, v in d.items()}",
    "1 .real, 1.5.real, 1j.imag, 'a'.upper(), (-1).bit_length(), True.real",
    "x = 1e999, 1e999j, -1e999, 10 ** 100, 0xff, 1_000, 0.1 + 0.2",
    # strings and bytes
    "'a', \"b'\", 'c\"', '\\'\"', '\\n\\t\\r\\x00\\\\', 'é\\u2028\\U0001f600', '\\ud800'",
    "b'\\x00\\xff', b\"'\", rb'\\d', u'x'",
    "'''multi\nline'''",
    # f-strings
    "f'{x}' f'{x!r}' f'{x!s:>10}' f'{x!a:{w}.{p}}' f'{{}}' f'{x=}'",
    "f\"{a['k']}\", f'{a[\"k\"]}', f'''{a['k'] + b[\"j\"]}''', f'{chr(10).join(x)}'",
    "f'{x:%Y-%m-%d}', f'{ {1: 2}[1]}', f'{(lambda: 1)()}', f'{x}\\n{y}\\t', f'\\x00{x}'",
    "f'{f\"{x}\"}', f'{x!r:^{width}}', f'result: {value:{width}.{precision}}'",
    "f'{a:{b}{c}}', f'{\"a\" if x else \"b\"}', f'{x:{\"^\" if y else \"<\"}10}', f'{x!r:{y!s}}'",
    # statements
    "@a.b(c)\n@d\nasync def f(x: int = 1, *, y) -> 'T':\n    '''Doc \\' \"\"\" '''\n    return await x",
    "class A(B, C, metaclass=M, **kw):\n    x: int\n    (y): int = 1\n    z.w: int",
    "if a:\n    pass\nelif b:\n    pass\nelif c:\n    pass\nelse:\n    if d:\n        pass\n    x = 1",
    "while x:\n    break\nelse:\n    continue",
    "for (a, b) in c:\n    pass\nelse:\n    pass\nasync def f():\n    async for x, in y:\n        pass",
    "with a as b, c as (d, e), f:\n    pass",
    "try:\n    pass\nexcept E as e:\n    pass\nexcept:\n    pass\nelse:\n    pass\nfinally:\n    pass",
    "try:\n    pass\nexcept* E:\n    pass",
    "from . import a\nfrom .. b import c as d\nimport e.f as g, h\nglobal i, j\ndel k, l[0], m.n",
    "def f():\n    nonlocal x\n    raise\n    raise E\n    raise E from F\n    assert x, 'msg'\n    x += 1\n    y **= 2",
    "x = y = z = 1\nx: int = 1\n(x): int\nx[0]: int",
    "match x:\n    case 1 | 2 | 3:\n        pass\n    case [1, 2, *rest]:\n        pass\n    case {'a': 1, **rest}:\n        pass\n"
    "    case Point(1, y=2) as p if p:\n        pass\n    case (1 | 2) as q:\n        pass\n    case None | True | -1 | 1+2j:\n        pass\n"
    "    case _:\n        pass\n    case [*_]:\n        pass\n    case str() | bytes():\n        pass",
    "def f(a, b=1, /, c=2):  # type: (int, int, int) -> None\n    pass\nx = []  # type: List[int]",
]


def printed(source: str, type_comments: bool = False) -> tuple[str, ast.AST]:
    tree = ast.parse(source, type_comments=type_comments)
    text = _htp.ast_unparse_json(dumps(to_json(tree, "c.py")))
    return text, tree


@pytest.mark.parametrize("source", CASES)
def test_printer_writes_what_ast_unparse_writes(source):
    text, tree = printed(source)
    assert text == ast.unparse(tree)
    assert ast.dump(ast.parse(text)) == ast.dump(tree)


@pytest.mark.parametrize("source", CASES)
def test_printer_writes_type_comments_as_unparse_does(source):
    text, tree = printed(source, type_comments=True)
    assert text == ast.unparse(tree)


def test_printer_prints_interactive_and_expression_modes():
    for mode, source, want in [("eval", "a + b", "a + b"), ("single", "x = 1; y = 2", "x = 1\ny = 2")]:
        tree = ast.parse(source, mode=mode)
        assert _htp.ast_unparse_json(dumps(to_json(tree, "c.py"))) == want
