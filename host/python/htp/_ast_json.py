"""Python's ``ast`` trees to and from htp.ast.v1 JSON documents (docs/ast-json.md).

Pure Python, no dependencies: the frontend uses it to hand a parsed module to the C++ host, and to take
a tree back. ``from_json(to_json(tree, file))`` equals ``tree`` (attributes included), and the documents
are the ones the host's C++ reader accepts and writes: ``json.dumps(doc, sort_keys=True,
ensure_ascii=False, separators=(",", ":"))`` is byte-for-byte what the host's dump_json writes.
"""

from __future__ import annotations

import _ast
import ast
import math

__all__ = ["FORMAT", "AstJsonError", "to_json", "from_json"]

FORMAT = "htp.ast.v1"

# Fields holding a Python constant value rather than a node, identifier, string or int.
_CONSTANT_FIELDS = frozenset({("Constant", "value"), ("MatchSingleton", "value")})
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class AstJsonError(ValueError):
    """A document that is not valid htp.ast.v1; the message starts with the JSON path of the problem."""

    def __init__(self, message: str, path: list | None = None):
        self.path = path or []
        self.reason = message
        super().__init__(message)

    def __str__(self) -> str:
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)
        return f"{path}: {self.reason}"


def _node_classes() -> dict[str, type]:
    """The concrete node types of this Python's grammar: the classes of ``_ast`` that are not
    abstract categories (the deprecated aliases such as ast.Num live in ``ast``, not ``_ast``)."""
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


_CLASSES = _node_classes()
_LOCATED = {cls: "lineno" in cls._attributes for cls in _CLASSES.values()}
# Per class: its type name, whether it has a span, and its fields in key order as (name, is_constant).
_PLANS = {
    cls: (
        name,
        _LOCATED[cls],
        tuple((f, (name, f) in _CONSTANT_FIELDS) for f in sorted(cls._fields)),
    )
    for name, cls in _CLASSES.items()
}


def to_json(tree: ast.AST, file: str, *, source: str | None = None, attrs: dict | None = None) -> dict:
    """The htp.ast.v1 document of ``tree`` parsed from ``file``; ``source`` and the module-level
    ``attrs`` are included when given. Spans come from lineno/col_offset/end_lineno/end_col_offset."""
    doc = {}
    if attrs:
        doc["attrs"] = attrs
    doc["file"] = file
    doc["format"] = FORMAT
    doc["root"] = _encode(tree)
    if source:
        doc["source"] = source
    return doc


def from_json(doc: dict) -> ast.AST:
    """The tree of an htp.ast.v1 document (or of one node object); AstJsonError names the JSON path of
    the first problem found."""
    if not isinstance(doc, dict):
        raise AstJsonError(f"expected an htp.ast.v1 document (an object), got {type(doc).__name__}")
    if "_type" in doc:
        return _decode(doc)
    if doc.get("format") != FORMAT:
        raise AstJsonError(f'expected "{FORMAT}", got {doc.get("format")!r}', ["format"])
    if "root" not in doc:
        raise AstJsonError("missing key 'root'")
    try:
        return _decode(doc["root"])
    except AstJsonError as e:
        e.path.insert(0, "root")
        raise


def _float(x: float):
    if x != x:
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _encode_constant(v):
    t = v.__class__
    if v is None or t is bool:
        return v
    if t is int:
        return v if _INT64_MIN <= v <= _INT64_MAX else {"int": str(v)}
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
    name, located, fields = plan
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
    for field, is_constant in fields:
        v = getattr(node, field, None)
        if is_constant:
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
    if v.__class__ is str:
        if v in ("inf", "-inf", "nan"):
            return float(v)
        raise AstJsonError(f'expected a number, "inf", "-inf" or "nan", got "{v}"')
    if v.__class__ in (int, float):
        return float(v)
    raise AstJsonError(f"expected a number, got {type(v).__name__}")


def _decode_constant(j):
    t = j.__class__
    if j is None or t is bool or t is int or t is str:
        return j
    if t is dict and len(j) == 1:
        ((tag, v),) = j.items()
        if tag == "int":
            return int(v)
        if tag == "float":
            return _float_payload(v)
        if tag == "complex":
            re, im = v
            return complex(_float_payload(re), _float_payload(im))
        if tag == "bytes":
            return v.encode("latin-1")
        if tag == "codepoints":
            return "".join(map(chr, v))
        if tag == "ellipsis" and v is True:
            return ...
    raise AstJsonError(f"not a constant: {j!r}"[:200])


def _decode(j, dict_=dict):
    if j.__class__ is not dict_:
        raise AstJsonError(f"expected a node, got {type(j).__name__}")
    type_name = j.get("_type")
    cls = _CLASSES.get(type_name)
    if cls is None:
        raise AstJsonError(f"unknown node type {type_name!r}", ["_type"])
    name, located, fields = _PLANS[cls]
    field = None
    try:
        args = []
        for field in cls._fields:
            v = j[field]
            if (name, field) in _CONSTANT_FIELDS:
                v = _decode_constant(v)
            elif v.__class__ is dict_:
                v = _decode(v)
            elif v.__class__ is list:
                decoded = []
                for i, x in enumerate(v):
                    try:
                        decoded.append(_decode(x) if x.__class__ is dict_ else x)
                    except AstJsonError as e:
                        e.path.insert(0, i)
                        raise
                v = decoded
            args.append(v)
        field = None
        extra = len(j) - len(fields) - 1 - ("_span" in j) - ("_attrs" in j)
        if extra:
            unknown = sorted(set(j) - set(cls._fields) - {"_type", "_span", "_attrs"})
            raise AstJsonError(f"unknown field {unknown[0] if unknown else '?'!r} of {name}")
        span = j.get("_span")
        if span is not None and located:
            lineno, col, end_lineno, end_col = span
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
    except AstJsonError as e:
        if field is not None:
            e.path.insert(0, field)
        raise
    except KeyError:
        raise AstJsonError(f"missing field '{field}' of {name}") from None
    except (TypeError, ValueError, AttributeError) as e:
        err = AstJsonError(f"invalid value: {e}")
        if field is not None:
            err.path.insert(0, field)
        raise err from None
