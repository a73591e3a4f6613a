"""Capture: globals, closures, nested functions, referenced captured functions, diagnostics at spans."""
import ast
import importlib
import importlib.util
import os

import pytest

import htp
from htp.capture import capture
from htp import _ast_json

# Set by tests/python/CMakeLists.txt: the toy fixture plugin of tests/e2e and htp-host.
TOY_PLUGIN = os.environ.get("HTP_TOY_PLUGIN", "")
HTP_HOST = os.environ.get("HTP_HOST_EXE", "")
needs_toy = pytest.mark.skipif(not os.path.isfile(TOY_PLUGIN), reason="HTP_TOY_PLUGIN not built")
needs_host = pytest.mark.skipif(not os.path.isfile(HTP_HOST), reason="HTP_HOST_EXE not built")

pytestmark = needs_toy

M = 1024
SHAPE = (16, 32)
NAME = "tile"
FLAG = True
NOTHING = None
TABLE = {"a": 1}


@pytest.fixture(scope="module")
def ctx():
    return htp.Context([TOY_PLUGIN], builtins=False)


def test_dialect_surface_comes_from_plugin(ctx):
    names = {d["name"]: d for d in ctx.dialects()}
    assert "toy" in names and "kernel" in names["toy"]["names"]
    assert names["toy"]["plugin"]
    from htp.dialects import toy as t
    assert t is htp.dialects.toy
    assert "kernel" in dir(t)
    with pytest.raises(AttributeError, match="declares no 'nope'"):
        t.nope  # noqa: B018
    with pytest.raises(ImportError, match="no known plugin declares the dialect 'nosuchdialect'"):
        importlib.import_module("htp.dialects.nosuchdialect")
    sets = {s["name"] for s in ctx.intrinsic_sets()}
    assert "toy" in sets


def test_symbols_are_symbolic(ctx):
    t = htp.dialects.toy
    s = t.kernel
    assert repr(s[16, 16]) and repr(s.seq) and repr(s(1, 2)[3].x)


def test_globals_become_constants(ctx):
    t = htp.dialects.toy

    @t.kernel
    def k(a):
        x = a + M
        for i in range(SHAPE[0]):
            x = t.add(x, i)
        if FLAG and NOTHING is None:
            return [NAME for _ in range(2)]
        return x

    assert isinstance(k, htp.surface.CapturedFunction)
    assert k.dialect == "toy" and k.decorator == "kernel"
    doc = capture(k)
    cap = doc["attrs"]["htp.capture"]
    assert cap["entries"] == [{"name": "k", "dialect": "toy", "decorator": "kernel", "line": cap["entries"][0]["line"]}]
    assert cap["constants"] == {"FLAG": True, "M": 1024, "NAME": "tile", "NOTHING": None, "SHAPE": [16, 32]}
    assert doc["file"] == os.path.abspath(__file__)
    # Spans point at the original file.
    tree = _ast_json.from_json(doc)
    fn = tree.body[0]
    with open(__file__) as f:
        lines = f.read().splitlines()
    assert lines[fn.lineno - 1].strip() == "def k(a):"
    assert doc["source"].startswith('"""Capture:')
    assert fn._htp_attrs == {"htp.dialect": "toy", "htp.decorator": "kernel"}


def test_closures_and_nested_functions(ctx):
    t = htp.dialects.toy
    scale = 3
    dims = (2, 4)

    def make():
        @t.kernel
        def inner(a):
            def helper(b):
                return b * scale
            return helper(a) + dims[1]
        return inner

    k = make()
    cap = capture(k)["attrs"]["htp.capture"]
    assert cap["constants"] == {"dims": [2, 4], "scale": 3}
    assert [e["name"] for e in cap["entries"]] == ["inner"]


def test_names_read_only_by_local_annotations_come_from_the_defining_function(ctx):
    # A factory computes sizes and a body reads them only in a local annotation (`buf: Tensor[ROWS, ...]` in
    # a workload): Python makes no closure cell for those, so capture takes the defining function's locals
    # as they were when the decorator ran (enclosing scope before globals, as Python resolves names).
    t = htp.dialects.toy

    def build(rows):
        ROWS = rows * 2
        M = 7  # shadows the module's M = 1024

        @t.kernel
        def k(a):
            buf: t.Tensor[ROWS, M] = a
            return buf

        return k

    cap = capture(build(8))["attrs"]["htp.capture"]
    assert cap["constants"]["ROWS"] == 16 and cap["constants"]["M"] == 7

    @t.kernel
    def at_module_level_scope(a):
        undefined_size: t.Tensor[NOT_DEFINED_ANYWHERE] = a  # noqa: F821
        return undefined_size

    # A name defined nowhere is still an error at its span: the defining scope invents nothing.
    with pytest.raises(htp.CaptureError, match="name 'NOT_DEFINED_ANYWHERE' is not defined"):
        capture(at_module_level_scope)


def test_referenced_captured_functions_are_included(ctx):
    t = htp.dialects.toy

    @t.kernel
    def leaf(a):
        return t.add(a, M)

    @t.kernel
    def root(a):
        return leaf(a)

    doc = capture(root)
    cap = doc["attrs"]["htp.capture"]
    assert [e["name"] for e in cap["entries"]] == ["leaf", "root"]
    tree = _ast_json.from_json(doc)
    assert [f.name for f in tree.body] == ["leaf", "root"]


def test_unsupported_global_is_a_diagnostic_at_its_span(ctx):
    t = htp.dialects.toy

    @t.kernel
    def k(a):
        return a + TABLE["a"]

    with pytest.raises(htp.CaptureError) as e:
        capture(k)
    (d,) = e.value.diagnostics
    assert d["message"].startswith("cannot capture global 'TABLE' of type dict")
    with open(__file__) as f:
        line = f.read().splitlines()[d["span"]["line"] - 1]
    assert line[d["span"]["col"]:d["span"]["end_col"]] == "TABLE"
    assert f"{__file__}:{d['span']['line']}:{d['span']['col'] + 1}: error: cannot capture" in str(e.value)


def test_unresolved_name_is_a_diagnostic_at_its_span(ctx):
    t = htp.dialects.toy

    @t.kernel
    def k(a):
        return a + undefined_thing  # noqa: F821

    with pytest.raises(htp.CaptureError) as e:
        capture(k)
    (d,) = e.value.diagnostics
    assert d["message"] == "name 'undefined_thing' is not defined"
    assert d["code"] == "capture.undefined"
    with open(__file__) as f:
        line = f.read().splitlines()[d["span"]["line"] - 1]
    assert line[d["span"]["col"]:d["span"]["end_col"]] == "undefined_thing"
    assert isinstance(e.value, htp.CompileError)


def test_plain_function_reference_needs_a_decorator(ctx):
    t = htp.dialects.toy

    def plain(x):
        return x

    @t.kernel
    def k(a):
        return plain(a)

    with pytest.raises(htp.CaptureError, match="closure variable 'plain' of type function: decorate it"):
        capture(k)


def test_captured_function_cannot_be_called(ctx):
    @htp.dialects.toy.kernel
    def k(a):
        return a

    with pytest.raises(TypeError, match="captured toy function"):
        k(1)


def test_capture_output_is_a_valid_host_module(ctx):
    @htp.dialects.toy.kernel
    def k(a):
        return htp.dialects.toy.add(a, M)

    doc = capture(k)
    tree = _ast_json.from_json(doc)
    assert isinstance(tree, ast.Module)
    assert "def k(a):" in ast.unparse(tree)


def test_surface_names_import_from_dialect_and_intrinsic_modules(ctx):
    from htp.dialects.toy import kernel
    from htp.intrinsics import toy as toy_ops

    assert "add" in dir(toy_ops) and repr(toy_ops.add)

    @kernel
    def k(a):
        return toy_ops.mul(a, M)

    doc = capture(k)
    assert doc["attrs"]["htp.capture"]["entries"][0]["dialect"] == "toy"
    assert doc["attrs"]["htp.capture"]["constants"] == {"M": 1024}


def test_decorator_factories_capture_too(ctx):
    t = htp.dialects.toy

    @t.kernel(grid=4)
    def k(a):
        return a

    assert isinstance(k, htp.surface.CapturedFunction) and k.decorator == "kernel"
    assert capture(k)["attrs"]["htp.capture"]["entries"][0]["name"] == "k"


def test_locals_of_every_kind_are_not_globals(ctx):
    t = htp.dialects.toy

    @t.kernel
    def k(a, *rest, key=None, **kw):
        global M
        total = M
        for i, j in zip(rest, rest):
            total += i + j
        squares = {n: n * n for n in range(a)}
        with open(a) as fh:
            total += len(fh.read())
        try:
            total += 1
        except ValueError as err:
            total += len(str(err))
        f = lambda q: q + total  # noqa: E731
        import math as m
        while (w := a) > 0:
            total += w
        return f(total) + len(squares) + m.floor(1.5) + key + len(kw)

    cap = capture(k)["attrs"]["htp.capture"]
    assert cap["constants"] == {"M": 1024}


def test_unbound_closure_variable_is_not_defined(ctx):
    t = htp.dialects.toy

    def make():
        @t.kernel
        def k(a):
            return a + later

        return k

        later = 1  # noqa: F841 - never assigned before capture

    with pytest.raises(htp.CaptureError, match="name 'later' is not defined"):
        capture(make())


def test_default_context_loads_builtin_plugins():
    ctx = htp.Context()
    assert isinstance(ctx.dialects(), list) and isinstance(ctx.plugins(), list)


def test_captured_function_of_another_file_is_a_diagnostic(ctx, tmp_path):
    other = tmp_path / "other_kernels.py"
    other.write_text("from htp.dialects import toy\n\n@toy.kernel\ndef leaf(a):\n    return a\n")
    spec = importlib.util.spec_from_file_location("other_kernels", other)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    leaf = mod.leaf

    @htp.dialects.toy.kernel
    def root(a):
        return leaf(a)

    with pytest.raises(htp.CaptureError, match="captured function 'leaf' is defined in .*other_kernels.py") as e:
        capture(root)
    (d,) = e.value.diagnostics
    with open(__file__) as f:
        assert f.read().splitlines()[d["span"]["line"] - 1].strip() == "return leaf(a)"
