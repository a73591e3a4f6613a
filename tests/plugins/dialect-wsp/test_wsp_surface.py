"""The wsp surface from Python: importable names, the shipped type stubs, and a workload compiled through
htp.Context. Needs HTP_WSP_PLUGIN, HTP_TILE_PLUGIN and HTP_CHECK_PLUGIN (set by ctest)."""
import ast
import json
import os
import pathlib

import pytest

import htp
from htp import stubgen

PLUGINS = [os.environ["HTP_WSP_PLUGIN"], os.environ["HTP_TILE_PLUGIN"], os.environ["HTP_CHECK_PLUGIN"]]
SURFACE = ["workload", "schedule", "P", "Dense", "DenseDyn", "Ragged", "Sparse", "combine", "sequential",
           "dispatch", "round_robin", "affinity", "hash", "work_steal", "streams", "stream_by", "timing",
           "immediate", "batched", "tile", "pipeline", "buffer", "task_window"]


@pytest.fixture(scope="module")
def ctx():
    return htp.Context(plugins=PLUGINS, use_environment=False)


def test_surface_names_are_importable(ctx):
    from htp.dialects.wsp import workload, schedule, P  # noqa: F401
    import htp.dialects.wsp as wsp
    for name in SURFACE:
        assert getattr(wsp, name) is not None, name
    assert sorted(SURFACE) == sorted(n for n in dir(wsp) if not n.startswith("_"))


def test_the_shipped_stub_types_every_surface_name(tmp_path):
    stubgen.write_stubs(str(tmp_path), PLUGINS, use_environment=False)
    stub = tmp_path / "dialects" / "wsp.pyi"
    text = stub.read_text()
    assert "Shipped by plugin 'dialect-wsp'" in text, text[:200]
    tree = ast.parse(text)
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    assert set(SURFACE) <= defined
    assert "Declared by the plugin but not in its shipped stub" not in text
    assert "def workload(fn: _F) -> _F" in text


def test_a_workload_compiles_to_a_task_graph(ctx, tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store\n"
        "from htp.dialects.wsp import workload, schedule, P, dispatch, work_steal\n\n"
        "@kernel\n"
        "def copy(x: In[Tensor[16, 16, f32]], y: Out[Tensor[16, 16, f32]]):\n"
        "    store(y, load(x))\n\n"
        "@workload\n"
        "def w(A: In[Tensor[64, 16, f32]], B: Out[Tensor[64, 16, f32]]):\n"
        "    for i in P(4):\n"
        "        copy[i](A.tile(i, 0), B.tile(i, 0))\n\n"
        "@schedule(w)\n"
        "def s():\n"
        "    dispatch(work_steal())\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("wsp_prog", prog)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pkg = ctx.compile([module.w, module.s], target="check", out=str(tmp_path / "pkg"))
    graph = json.loads((pathlib.Path(pkg.path) / "codegen" / "check" / "wsp.task_graph.json").read_text())
    (w,) = graph["workloads"]
    assert w["schedule"]["dispatch"] == {"policy": "work_steal"}
    task = w["body"][0]["body"][0]
    assert task["kernel"] == "copy" and task["args"][0]["offset"] == [{"op": "mul", "args": [{"var": "i"}, 16]}, 0]
    assert "wsp.typecheck" in pkg.passes and "wsp.build-task-graph" in pkg.passes
