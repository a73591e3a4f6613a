"""htp.ast.v1 between Python's ast and the C++ host: the node table, exact round trips, error paths."""

from __future__ import annotations

import _ast
import ast
import json
import math

import pytest

from htp import _htp
from htp._ast_json import FORMAT, AstJsonError, dumps, from_json, loads, to_json

SNIPPETS = [
    "x = 1\n",
    "def f(a, /, b: int = 2, *args, c, d=4, **kw) -> None:  # type: (int) -> None\n    return a\n",
    "async def g():\n    async with a as (b, c):\n        await x\n    async for i in y:\n        yield i\n",
    "@dec(1)\nclass C(B, metaclass=M):\n    '''doc'''\n    x: int = 3\n    (y): int\n",
    "try:\n    pass\nexcept* (E, F) as e:\n    raise X from e\nelse:\n    pass\nfinally:\n    del a[1:2, ::3]\n",
    "match p:\n    case {'k': [1, *rest], **kw} if kw:\n        pass\n    case Point(x=0, y=_) | None:\n        pass\n",
    "f'{a!r:>{w}.{p}} {b=} {{}}', rb'\\x00', u'x', 1e999, 2j, 10**100, ...\n",
    "from ..pkg import (a as b, c)\nimport os.path as p\nglobal g\nlambda: (yield)\n",
    "x = [i for i in range(3) if i if not i] + {k: v for k, v in d} + {*s} + {**d}\n",
    "for x in y:  # type: int\n    pass\nelse:\n    pass\nwith a:  # type: ignore[x]\n    pass\n",
    "'\\ud800 lone surrogate' '\\U0001f600'\n",
    "(a := 1) if b else c\n",
]


def roundtrip_text(text: str) -> str:
    return _htp.ast_roundtrip_json(text)


@pytest.mark.parametrize("source", SNIPPETS)
def test_snippet_survives_python_json_cpp_json_python(source):
    tree = ast.parse(source, "s.py", type_comments=True)
    sent = dumps(to_json(tree, "s.py", source=source))
    back_text = roundtrip_text(sent)
    assert back_text == sent, "the C++ dump is byte-identical to _ast_json.dumps"
    back = from_json(json.loads(back_text))
    assert ast.dump(back, include_attributes=True) == ast.dump(tree, include_attributes=True)


def test_grammar_table_matches_pythons_ast():
    table = {k["name"]: k for k in _htp.ast_grammar()}
    concrete = {
        name: cls
        for name, cls in vars(_ast).items()
        if isinstance(cls, type) and issubclass(cls, _ast.AST) and cls is not _ast.AST
        and not (cls.__bases__ == (_ast.AST,) and cls.__subclasses__())
    }
    assert set(table) == set(concrete)
    for name, cls in concrete.items():
        entry = table[name]
        assert tuple(f[0] for f in entry["fields"]) == cls._fields, name
        assert entry["located"] == ("lineno" in cls._attributes), name
        base = cls.__bases__[0]
        assert entry["category"] == (name if base is _ast.AST else base.__name__), name


CONSTANTS = [
    None, True, False, 0, -5, 2**63 - 1, 2**63, -(2**200), 1.5, -0.0, math.inf, -math.inf, 1e-320,
    complex(0, 1), complex(-0.0, math.inf), "", "é\x00\U0010ffff", "\udc80x\ud800", b"", bytes(range(256)), ...,
]


@pytest.mark.parametrize("value", CONSTANTS, ids=repr)
def test_every_constant_type_round_trips_exactly(value):
    node = ast.Expression(ast.Constant(value, kind=None, lineno=1, col_offset=0, end_lineno=1, end_col_offset=1))
    doc = dumps(to_json(node, "c.py"))
    back = from_json(json.loads(roundtrip_text(doc))).body.value
    assert type(back) is type(value) and repr(back) == repr(value)
    if isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)


def test_an_integer_past_pythons_4300_digit_conversion_limit_round_trips():
    # A hexadecimal literal can be any size in valid source; its decimal spelling exceeds str()'s limit.
    source = "x = 0x" + "f" * 4000 + "\n"
    tree = ast.parse(source)
    doc = dumps(to_json(tree, "big.py", source=source))
    back = from_json(json.loads(roundtrip_text(doc)))
    assert back.body[0].value.value == tree.body[0].value.value


def test_nan_round_trips():
    doc = dumps(to_json(ast.Expression(ast.Constant(math.nan)), "c.py"))
    assert math.isnan(from_json(json.loads(roundtrip_text(doc))).body.value)


def test_spans_missing_ends_and_metadata_survive():
    name = ast.Name("x", ast.Load(), lineno=3, col_offset=4)  # no end position
    name._htp_attrs = {"wsp.axis": {"extent": 4}}
    doc = to_json(ast.Expression(name), "m.py", source="x\n", attrs={"csp.graph": [1]})
    back_doc = json.loads(roundtrip_text(dumps(doc)))
    assert back_doc["attrs"] == {"csp.graph": [1]} and back_doc["source"] == "x\n"
    back = from_json(back_doc).body
    assert (back.lineno, back.col_offset, back.end_lineno, back.end_col_offset) == (3, 4, None, None)
    assert back._htp_attrs == {"wsp.axis": {"extent": 4}}


def bad_doc(func_value) -> str:
    tree = to_json(ast.parse("print(x)"), "k.py")
    tree["root"]["body"][0]["value"]["func"] = func_value
    return dumps(tree)


def test_cpp_loader_names_the_json_path_of_a_wrong_kind():
    with pytest.raises(ValueError, match=r"\$\.root\.body\[0\]\.value\.func: expected a node, got a string"):
        _htp.ast_roundtrip_json(bad_doc("print"))


def test_cpp_loader_rejects_unknown_node_types_and_truncated_text():
    with pytest.raises(ValueError, match=r"\$\.root\.body\[0\]\.value\.func\._type: unknown node type 'Frob'"):
        _htp.ast_unparse_json(bad_doc({"_type": "Frob"}))
    text = bad_doc({"_type": "Name", "id": "f", "ctx": {"_type": "Load"}})
    for cut in range(0, len(text), 7):
        with pytest.raises(ValueError, match=r"invalid JSON"):
            _htp.ast_roundtrip_json(text[:cut])


def test_batch_names_the_bad_document():
    good = dumps(to_json(ast.parse("x"), "a.py"))
    results = _htp.ast_json_batch([good, good], dump=True, unparse=True)
    assert [r[1] for r in results] == ["x", "x"]
    assert [r[2] for r in results] == [4, 4]  # Module, Expr, Name, Load
    with pytest.raises(ValueError, match=r"^document 1: .*\$\.root"):
        _htp.ast_json_batch([good, bad_doc(3)])


def test_python_from_json_names_the_path_too():
    doc = json.loads(bad_doc("print"))
    with pytest.raises(AstJsonError, match=r"^\$\.root\.body\[0\]\.value\.func: expected a node, got a string"):
        from_json(doc)
    doc["root"]["body"][0]["value"]["func"] = {"_type": "Name", "id": "f"}
    with pytest.raises(AstJsonError, match=r"^\$\.root\.body\[0\]\.value\.func: missing field 'ctx' of Name"):
        from_json(doc)
    with pytest.raises(AstJsonError, match="htp.ast.v1"):
        from_json({"format": "other", "root": {}})


def test_indented_dumps_match_the_cpp_writer():
    doc = to_json(ast.parse("def f(x):\n    return {'k': [1.5, b'\\xff']}\n"), "i.py")
    assert _htp.ast_roundtrip_json(dumps(doc), 2) == dumps(doc, indent=2)


def test_trees_deeper_than_ast_unparse_can_handle_cross_both_ways():
    source = " + ".join(["a"] * 2500)  # a left-leaning BinOp chain 2500 deep; ast.unparse gives up near 600
    tree = ast.parse(source)
    text = dumps(to_json(tree, "deep.py"))
    assert _htp.ast_roundtrip_json(text) == text
    assert _htp.ast_unparse_json(text) == source
    assert dumps(to_json(from_json(loads(text)), "deep.py")) == text


def test_document_envelope():
    doc = to_json(ast.parse("pass"), "p.py")
    assert list(doc) == ["file", "format", "root"] and doc["format"] == FORMAT == "htp.ast.v1"
