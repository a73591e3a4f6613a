"""The csp surface from Python: importable names, the shipped type stubs, and a program compiled through
htp.Context. Needs HTP_CSP_PLUGIN, HTP_TILE_FIXTURE and HTP_CHECK_PLUGIN (set by ctest)."""
import ast
import importlib.util
import json
import os
import pathlib

import pytest

import htp
from htp import stubgen

PLUGINS = [os.environ["HTP_CSP_PLUGIN"], os.environ["HTP_TILE_FIXTURE"], os.environ["HTP_CHECK_PLUGIN"]]
SURFACE = ["program", "process", "Channel", "Event", "send", "recv", "consume", "connect", "replicate"]


@pytest.fixture(scope="module")
def ctx():
    return htp.Context(plugins=PLUGINS, builtins=False, use_environment=False)


def test_surface_names_are_importable(ctx):
    from htp.dialects.csp import Channel, Event, consume, process, program, recv, replicate, send  # noqa: F401
    import htp.dialects.csp as csp
    for name in SURFACE:
        assert getattr(csp, name) is not None, name
    assert sorted(SURFACE) == sorted(n for n in dir(csp) if not n.startswith("_"))


def test_the_shipped_stub_types_every_surface_name(tmp_path):
    stubgen.write_stubs(str(tmp_path), PLUGINS, use_environment=False)
    text = (tmp_path / "dialects" / "csp.pyi").read_text()
    tree = ast.parse(text)
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert set(SURFACE) <= defined, sorted(set(SURFACE) - defined)
    assert "Declared by the plugin but not in its shipped stub" not in text
    assert "def recv(ch: Channel[_T]) -> _T" in text


def test_a_program_compiles_to_a_csp_graph(ctx, tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "from htp.dialects.csp import Channel, program, process, send, consume\n"
        "from htp.dialects.tile import Tensor, Tile, In, Out, f32, load, store\n\n"
        "@program\n"
        "def copy(A: In[Tensor[64, 16, f32]], B: Out[Tensor[64, 16, f32]]):\n"
        "    c = Channel[Tile[16, 16, f32]](depth=2)\n\n"
        "    @process(produces=[c])\n"
        "    def reader():\n"
        "        for i in range(4):\n"
        "            send(c, load(A.tile(i, 0, shape=(16, 16))))\n\n"
        "    @process(consumes=[c])\n"
        "    def writer():\n"
        "        for t in consume(c):\n"
        "            store(B.tile(0, 0, shape=(16, 16)), t)\n")
    spec = importlib.util.spec_from_file_location("csp_prog", prog)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pkg = ctx.compile(module.copy, target="check", out=str(tmp_path / "pkg"))
    graph = json.loads((pathlib.Path(pkg.path) / "codegen" / "check" / "csp.graph.json").read_text())
    assert graph["schema"] == "htp.csp.graph.v1"
    (p,) = graph["programs"]
    assert [c["name"] for c in p["channels"]] == ["c"]
    assert {q["name"]: q["counts"]["c"] for q in p["processes"]} == {
        "reader": {"put": 4, "get": 0}, "writer": {"put": 0, "get": 4}}
    assert ["csp.canonicalize", "csp.effects", "csp.build-graph"] == [x for x in pkg.passes if x.startswith("csp.")]


def test_a_deadlock_is_a_compile_error(ctx, tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "from htp.dialects.csp import Channel, program, process, send, recv\n"
        "from htp.dialects.tile import Tile, f32\n\n"
        "@program\n"
        "def stuck():\n"
        "    a = Channel[Tile[16, 16, f32]](depth=1)\n"
        "    b = Channel[Tile[16, 16, f32]](depth=1)\n\n"
        "    @process(consumes=[a], produces=[b])\n"
        "    def left():\n"
        "        send(b, recv(a))\n\n"
        "    @process(consumes=[b], produces=[a])\n"
        "    def right():\n"
        "        send(a, recv(b))\n")
    spec = importlib.util.spec_from_file_location("csp_stuck", prog)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(module.stuck, target="check", out=str(tmp_path / "pkg"))
    assert "deadlock: processes 'left' and 'right' wait on each other" in str(e.value)
