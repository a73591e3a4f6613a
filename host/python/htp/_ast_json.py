"""Python's ``ast`` trees to and from htp.ast.v1 JSON documents (docs/ast-json.md).

Pure Python, no dependencies: the frontend uses it to hand a parsed module to the C++ host and to take
a tree back. ``from_json(to_json(tree, file))`` equals ``tree`` (attributes included), and the documents
are the ones the host's C++ reader accepts and writes: ``dumps(doc)`` is byte-for-byte what the host's
dump_json writes.

Field kinds come from the ASDL signature CPython keeps in each node class's docstring
(``Call(expr func, expr* args, keyword* keywords)``), so this module and the host's python311.def
describe the same grammar without sharing code.
"""

from __future__ import annotations

import _ast
import ast
import json
import math
import re
import sys

__all__ = ["FORMAT", "AstJsonError", "to_json", "from_json", "dumps", "loads"]

FORMAT = "htp.ast.v1"

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# The recursion to_json and from_json may need: the host accepts trees 5000 nodes deep, and decoding
# takes up to four Python frames per level. Python 3.11 runs Python-to-Python calls without growing the
# C stack, so a higher limit for the duration of a call is safe.
_RECURSION_LIMIT = 4 * 5000 + 200

# Field kinds.
_NODE, _OPT_NODE, _NODE_LIST, _TEXT, _OPT_TEXT, _TEXT_LIST, _CONSTANT, _INT, _OPT_INT = range(9)
_SCALARS = {"identifier": (_TEXT, _OPT_TEXT, _TEXT_LIST), "string": (_TEXT, _OPT_TEXT, _TEXT_LIST),
            "int": (_INT, _OPT_INT, None), "constant": (_CONSTANT, None, None)}


class AstJsonError(ValueError):
    """A document that is not valid htp.ast.v1; str() starts with the JSON path of the problem."""

    def __init__(self, reason: str, path: list | None = None):
        self.path = path or []
        self.reason = reason
        super().__init__(reason)

    def __str__(self) -> str:
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)
        return f"{path}: {self.reason}"


def _describe(v) -> str:
    """How the C++ reader names a JSON value's type in messages."""
    if v is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
            dict: "an object"}.get(type(v), type(v).__name__)


def _node_classes() -> dict[str, type]:
    """The concrete node types of this Python's grammar: the classes of ``_ast`` that are not abstract
    categories (the deprecated aliases such as ast.Num live in ``ast``, not ``_ast``)."""
    classes = {
        name: cls
        for name, cls in vars(_ast).items()
        if isinstance(cls, type) and issubclass(cls, _ast.AST) and cls is not _ast.AST
    }
    in_grammar = set(classes.values())
    abstract = {
        cls
        for cls in in_grammar
        if cls.__bases__ == (_ast.AST,) and any(sub in in_grammar for sub in cls.__subclasses__())
    }
    return {name: cls for name, cls in classes.items() if cls not in abstract}


def _field_kinds(cls: type) -> dict[str, tuple[int, type | None]]:
    """Each field's kind and, for node fields, the category class, from the class's ASDL signature."""
    match = re.fullmatch(r"\w+\((.*)\)", (cls.__doc__ or "").strip())
    if not match:
        return {}
    kinds = {}
    for part in match.group(1).split(", "):
        asdl_type, name = part.split(" ")
        base, mark = asdl_type.rstrip("*?"), asdl_type[len(asdl_type.rstrip("*?")):]
        slot = {"": 0, "?": 1, "*": 2}[mark]
        if base in _SCALARS:
            kinds[name] = (_SCALARS[base][slot], None)
        else:
            kinds[name] = ((_NODE, _OPT_NODE, _NODE_LIST)[slot], getattr(_ast, base))
    return kinds


_CLASSES = _node_classes()
# Per class: type name, whether it has a span, fields in key order (for writing) and in _fields order
# (for constructing), each as (name, kind, category class).
_PLANS = {}
for _name, _cls in _CLASSES.items():
    _kinds = _field_kinds(_cls)
    _fields = tuple((f, *_kinds.get(f, (None, None))) for f in _cls._fields)
    _PLANS[_cls] = (_name, "lineno" in _cls._attributes, tuple(sorted(_fields)), _fields)


def to_json(tree: ast.AST, file: str, *, source: str | None = None, attrs: dict | None = None) -> dict:
    """The htp.ast.v1 document of ``tree`` parsed from ``file``; ``source`` and the module-level
    ``attrs`` are included when given. Spans come from lineno/col_offset/end_lineno/end_col_offset;
    a node's ``_htp_attrs`` dict, if any, becomes its metadata attributes."""
    doc = {}
    if attrs:
        doc["attrs"] = attrs
    doc["file"] = file
    doc["format"] = FORMAT
    doc["root"] = _deep(_encode, tree)
    if source:
        doc["source"] = source
    return doc


def dumps(doc: dict, indent: int | None = None) -> str:
    """The canonical text of a document: sorted keys, no ASCII escaping, compact unless ``indent`` is
    given; byte-for-byte what the host's dump_json(module, indent) writes for the same tree."""
    if indent is None:
        return _deep(json.dumps, doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return _deep(json.dumps, doc, sort_keys=True, ensure_ascii=False, indent=indent)


def loads(text: str) -> dict:
    """The document of a JSON text (json.loads, with room for trees as deep as the host accepts)."""
    return _deep(json.loads, text)


def from_json(doc: dict) -> ast.AST:
    """The tree of an htp.ast.v1 document (or of one node object); AstJsonError names the JSON path of
    the first problem found. Metadata attributes go to each node's ``_htp_attrs``."""
    if type(doc) is not dict:
        raise AstJsonError(f"expected an htp.ast.v1 document (an object), got {_describe(doc)}")
    if "_type" in doc:
        return _deep(_decode, doc)
    if doc.get("format") != FORMAT:
        raise AstJsonError(f'expected "{FORMAT}", got {doc.get("format")!r}', ["format"])
    if "root" not in doc:
        raise AstJsonError("missing key 'root'")
    try:
        return _deep(_decode, doc["root"])
    except AstJsonError as e:
        e.path.insert(0, "root")
        raise


def _deep(fn, *args, **kwargs):
    """fn(...) with the recursion limit raised to _RECURSION_LIMIT while it runs."""
    limit = sys.getrecursionlimit()
    if limit >= _RECURSION_LIMIT:
        return fn(*args, **kwargs)
    sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        return fn(*args, **kwargs)
    finally:
        sys.setrecursionlimit(limit)


def _float(x: float):
    if x != x:
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _unlimited_digits(fn, v):
    """fn(v) without Python 3.11's limit on int/str conversions (4300 digits): a hexadecimal literal in a
    valid source file can be any size, and the format spells integers in decimal."""
    get = getattr(sys, "get_int_max_str_digits", None)
    if get is None:
        return fn(v)
    limit = get()
    sys.set_int_max_str_digits(0)
    try:
        return fn(v)
    finally:
        sys.set_int_max_str_digits(limit)


def _encode_constant(v):
    t = v.__class__
    if v is None or t is bool:
        return v
    if t is int:
        return v if _INT64_MIN <= v <= _INT64_MAX else {"int": _unlimited_digits(str, v)}
    if t is str:
        if not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates, which JSON text cannot carry
                return {"codepoints": [ord(c) for c in v]}
        return v
    if t is float:
        return {"float": _float(v)}
    if t is complex:
        return {"complex": [_float(v.real), _float(v.imag)]}
    if t is bytes:
        return {"bytes": v.decode("latin-1")}
    if v is ...:
        return {"ellipsis": True}
    raise AstJsonError(f"cannot encode a constant of type {t.__name__}")


def _encode(node, AST=ast.AST):
    plan = _PLANS.get(node.__class__)
    if plan is None:
        raise AstJsonError(f"not a node of Python's grammar: {node.__class__.__name__}")
    name, located, fields, _ = plan
    d = {}
    attrs = getattr(node, "_htp_attrs", None)
    if attrs:
        d["_attrs"] = attrs
    if located:
        lineno = getattr(node, "lineno", None)
        if lineno is not None:
            end_lineno = getattr(node, "end_lineno", None)
            end_col = getattr(node, "end_col_offset", None)
            d["_span"] = [
                lineno,
                node.col_offset,
                0 if end_lineno is None else end_lineno,
                0 if end_col is None else end_col,
            ]
    d["_type"] = name
    for field, kind, _ in fields:
        v = getattr(node, field, None)
        if kind == _CONSTANT:
            d[field] = _encode_constant(v)
        elif v is None or v.__class__ is str or v.__class__ is int:
            d[field] = v
        elif v.__class__ is list:
            d[field] = [_encode(x) if isinstance(x, AST) else x for x in v]
        elif isinstance(v, AST):
            d[field] = _encode(v)
        else:
            raise AstJsonError(f"field '{field}' of {name} holds a {type(v).__name__}")
    return d


def _float_payload(v):
    if v.__class__ is str and v in ("inf", "-inf", "nan"):
        return float(v)
    if v.__class__ is int or v.__class__ is float:
        return float(v)
    raise AstJsonError(f'expected a number, "inf", "-inf" or "nan", got {_describe(v)}')


def _decode_constant(j):
    t = j.__class__
    if j is None or t is bool or t is int or t is str:
        return j
    if t is dict and len(j) == 1:
        ((tag, v),) = j.items()
        try:
            if tag == "int" and v.__class__ is str:
                return _unlimited_digits(int, v)
            if tag == "float":
                return _float_payload(v)
            if tag == "complex" and v.__class__ is list and len(v) == 2:
                return complex(_float_payload(v[0]), _float_payload(v[1]))
            if tag == "bytes" and v.__class__ is str:
                return v.encode("latin-1")
            if tag == "codepoints" and v.__class__ is list:
                return "".join(map(chr, v))
            if tag == "ellipsis" and v is True:
                return ...
        except AstJsonError as e:
            e.path.insert(0, tag)
            raise
        except (ValueError, TypeError, UnicodeEncodeError) as e:
            raise AstJsonError(f"invalid {tag} constant: {e}", [tag]) from None
    raise AstJsonError(f"expected a constant, got {_describe(j)}")


def _decode_node(j, category, dict_=dict):
    if j.__class__ is not dict_:
        raise AstJsonError(f"expected a node, got {_describe(j)}")
    node = _decode(j)
    if category is not None and not isinstance(node, category):
        raise AstJsonError(
            f"expected a node of category {category.__name__}, got {type(node).__name__} "
            f"({type(node).__bases__[0].__name__})"
        )
    return node


def _decode_value(v, kind, category, str_=str, int_=int, list_=list):
    if kind == _CONSTANT:
        return _decode_constant(v)
    if kind == _NODE:
        return _decode_node(v, category)
    if kind == _NODE_LIST:
        if v.__class__ is not list_:
            raise AstJsonError(f"expected a list of nodes, got {_describe(v)}")
        out = []
        for i, x in enumerate(v):
            try:
                out.append(None if x is None else _decode_node(x, category))
            except AstJsonError as e:
                e.path.insert(0, i)
                raise
        return out
    if v is None:
        if kind in (_OPT_NODE, _OPT_TEXT, _OPT_INT, None):
            return None
        raise AstJsonError("expected a value, got null")
    if kind == _OPT_NODE:
        return _decode_node(v, category)
    if kind == _TEXT or kind == _OPT_TEXT:
        if v.__class__ is str_:
            return v
        raise AstJsonError(f"expected a string, got {_describe(v)}")
    if kind == _INT or kind == _OPT_INT:
        if v.__class__ is int_:
            return v
        raise AstJsonError(f"expected an integer, got {_describe(v)}")
    if kind == _TEXT_LIST:
        if v.__class__ is list_ and all(x.__class__ is str_ for x in v):
            return v
        raise AstJsonError("expected a list of strings")
    return v  # a field this Python's docstrings do not describe: taken as is


def _decode(j, dict_=dict):
    if j.__class__ is not dict_:
        raise AstJsonError(f"expected a node, got {_describe(j)}")
    cls = _CLASSES.get(j.get("_type"))
    if cls is None:
        raise AstJsonError(f"unknown node type {j.get('_type')!r}", ["_type"])
    name, located, _, fields = _PLANS[cls]
    args = []
    for field, kind, category in fields:
        try:
            v = j[field]
        except KeyError:
            raise AstJsonError(f"missing field '{field}' of {name}") from None
        try:
            args.append(_decode_value(v, kind, category))
        except AstJsonError as e:
            e.path.insert(0, field)
            raise
    if len(j) != len(fields) + 1 + ("_span" in j) + ("_attrs" in j):
        unknown = sorted(set(j) - set(cls._fields) - {"_type", "_span", "_attrs"})
        raise AstJsonError(f"unknown field '{unknown[0] if unknown else '?'}' of {name}")
    span = j.get("_span")
    if span is not None and located:
        try:
            lineno, col, end_lineno, end_col = span
        except (TypeError, ValueError):
            raise AstJsonError("expected [line, col, end_line, end_col]", ["_span"]) from None
        if end_lineno:
            node = cls(*args, lineno=lineno, col_offset=col, end_lineno=end_lineno, end_col_offset=end_col)
        else:
            node = cls(*args, lineno=lineno, col_offset=col, end_lineno=None, end_col_offset=None)
    else:
        node = cls(*args)
    attrs = j.get("_attrs")
    if attrs:
        node._htp_attrs = attrs
    return node
