"""The layout surface from Python: importable names, the shipped type stub, and the acceptance GEMM
captured and compiled through htp.Context with the tile dialect. Needs HTP_LAYOUT_AXE_PLUGIN,
HTP_TILE_PLUGIN and HTP_CHECK_PLUGIN (set by ctest)."""
import ast
import json
import os
import pathlib

import pytest

import htp
from htp import stubgen

PLUGINS = [os.environ["HTP_LAYOUT_AXE_PLUGIN"], os.environ["HTP_TILE_PLUGIN"], os.environ["HTP_CHECK_PLUGIN"]]
SURFACE = ["Layout", "relayout", "allreduce", "allgather", "reduce_scatter"]

GEMM = '''from htp.dialects.tile import kernel, In, Out, Tensor, f32, load, store, matmul, rowsum
from htp.dialects.layout import Layout, allreduce

@kernel(mapping=[2, 2])
def gemm_rownorm(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")],
                 B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                 C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")],
                 N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    c = matmul(load(A), load(B))
    store(C, c)
    store(N, allreduce(rowsum(c), axis=1))
'''


@pytest.fixture(scope="module")
def ctx():
    return htp.Context(plugins=PLUGINS, use_environment=False)


def load_program(path, text):
    import importlib.util
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_surface_names_are_importable(ctx):
    from htp.dialects.layout import Layout, relayout, allreduce, allgather, reduce_scatter  # noqa: F401
    import htp.dialects.layout as layout
    assert sorted(SURFACE) == sorted(n for n in dir(layout) if not n.startswith("_"))


def test_the_shipped_stub_types_every_surface_name(tmp_path):
    stubgen.write_stubs(str(tmp_path), PLUGINS, use_environment=False)
    text = (tmp_path / "dialects" / "layout.pyi").read_text()
    assert "Shipped by plugin 'layout-axe'" in text, text[:200]
    tree = ast.parse(text)
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert set(SURFACE) <= defined
    assert "def allreduce(x: _T, axis:" in text


def test_the_gemm_compiles_with_layouts_and_local_shapes(ctx, tmp_path):
    module = load_program(tmp_path / "gemm_prog.py", GEMM)
    pkg = ctx.compile(module.gemm_rownorm, target="check", out=str(tmp_path / "pkg"), dump_ir="all")
    # As axe.check and tile.lower wrote them: axe.lower then cuts the kernel at its allreduce.
    [checked] = pathlib.Path(pkg.path).glob("ir/*_axe.check.ast.json")
    sigs = json.loads(checked.read_text())["attrs"]["layout.signatures"]
    params = sigs["functions"]["gemm_rownorm"]["params"]
    assert [params[p]["dist"] for p in "ABCN"] == ["S(0)R", "RS(1)", "S(0)S(1)", "S(0)R"]
    [lowered] = pathlib.Path(pkg.path).glob("ir/*_tile.lower.ast.json")
    kernel = json.loads(lowered.read_text())["attrs"]["tile.kernels"]["kernels"][0]
    assert [p["local_shape"] for p in kernel["params"]] == [[32, 64], [64, 32], [32, 32], [32, 1]]
    assert "axe.infer" in pkg.passes and "axe.check" in pkg.passes and "axe.lower" in pkg.passes


def test_an_undischarged_reduction_is_a_compile_error(ctx, tmp_path):
    module = load_program(tmp_path / "bad_prog.py", GEMM.replace("allreduce(rowsum(c), axis=1)", "rowsum(c)"))
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(module.gemm_rownorm, target="check", out=str(tmp_path / "pkg"))
    assert "bad_prog.py:11:5: error: storing into 'N' a value that still owes a sum over mesh.y" in str(e.value)
