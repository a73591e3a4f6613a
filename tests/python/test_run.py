"""htp.bind(pkg).run(**arrays): running a package entry from Python with the toy fixture binding
(every output = sum of the inputs + scalars)."""
import os

import numpy as np
import pytest

import htp

TOY_PLUGIN = os.environ.get("HTP_TOY_PLUGIN", "")
pytestmark = pytest.mark.skipif(not os.path.isfile(TOY_PLUGIN), reason="HTP_TOY_PLUGIN not built")


@pytest.fixture(scope="module")
def ctx():
    return htp.Context([TOY_PLUGIN], builtins=False)


def axpy_kernel():
    toy = htp.dialects.toy

    @toy.kernel
    def axpy(x, y, n_bias, out):
        return toy.add(x, y)

    return axpy


@pytest.fixture
def pkg(ctx, tmp_path):
    return ctx.compile(axpy_kernel(), target="toy-sim", out=tmp_path / "pkg")


def test_run_returns_outputs_and_report(ctx, pkg, tmp_path):
    x = np.arange(6, dtype=np.float32)
    y = np.full(6, 10, dtype=np.float32)
    r = htp.bind(pkg, ctx).run(x=x, y=y, n_bias=100, cache_dir=tmp_path / "cache")
    assert isinstance(r, htp.RunResult)
    np.testing.assert_array_equal(r["out"], x + y + 100)
    assert r.outputs["out"].dtype == np.float32
    assert r.report == {"schema": "htp.run.v1", "path": "toy-interpreter", "entry": "axpy",
                        "arguments": {"x": "caller memory (zero-copy)", "y": "caller memory (zero-copy)",
                                      "out": "allocated by the host"}}
    assert r.binding == "toy.binding"
    assert (r.run_dir / "report.json").is_file()


def test_package_bind_and_entrypoints(ctx, pkg, tmp_path):
    assert [e["name"] for e in pkg.entrypoints] == ["axpy"]
    r = pkg.bind(ctx).run("axpy", x=np.ones(3, np.float32), y=np.ones(3, np.float32), n_bias=0,
                          cache_dir=tmp_path / "cache")
    np.testing.assert_array_equal(r["out"], np.full(3, 2, np.float32))


def test_wrong_shape_names_the_argument(ctx, pkg, tmp_path):
    with pytest.raises(htp.RunError, match=r"argument 'y' is f32\[4\], but the entry expects in f32\[N\] \(N = 3 from 'x'\)"):
        htp.bind(pkg, ctx).run(x=np.ones(3, np.float32), y=np.ones(4, np.float32), n_bias=0,
                               cache_dir=tmp_path / "cache")


def test_wrong_dtype_names_the_argument(ctx, pkg, tmp_path):
    with pytest.raises(htp.RunError, match=r"argument 'x' is f64\[3\], but the entry expects in f32\[N\]"):
        htp.bind(pkg, ctx).run(x=np.ones(3), y=np.ones(3, np.float32), n_bias=0, cache_dir=tmp_path / "cache")


def test_binding_failure_raises(ctx, pkg, tmp_path):
    with pytest.raises(htp.RunError, match=r"the toy binding was asked to fail"):
        htp.bind(pkg, ctx).run(x=np.ones(1, np.float32), y=np.ones(1, np.float32), n_bias=0,
                               options={"fail": True}, cache_dir=tmp_path / "cache")


# docs/python.md's first example ("Contexts and packages") run as written: it used a `toy` dialect and a
# `toy-sim` target that HTP does not ship, so a reader's first program failed (probe round 19).
def test_the_contexts_and_packages_example_of_python_md_runs_as_written(tmp_path, monkeypatch):
    import pathlib
    import re

    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text()
    section = doc[doc.index("## Contexts and packages"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    program = tmp_path / "first.py"
    program.write_text(code)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__", "__file__": str(program)}
    exec(compile(code, str(program), "exec"), namespace)
    pkg = namespace["pkg"]
    assert pkg.manifest["target"] == "pto-a2a3sim" and (tmp_path / "out" / "vadd" / "manifest.json").exists()


# A binding kept from a first compile, after a second compile into the same directory (force=True): it ran the
# new program silently, under the old program's entries and parameters (probe round 20).
def test_a_binding_of_a_package_compiled_over_says_so(tmp_path):
    from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, muls, store

    source = tmp_path / "scales.py"
    source.write_text(
        "from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, muls, store\n\n\n"
        "@kernel\ndef twice(x: In[Tensor[8, 16, f32]], y: Out[Tensor[8, 16, f32]]):\n    store(y, muls(load(x), 2.0))\n\n\n"
        "@kernel\ndef thrice(x: In[Tensor[8, 16, f32]], y: Out[Tensor[8, 16, f32]]):\n    store(y, muls(load(x), 3.0))\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("scales", source)
    scales = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scales)
    ctx = htp.Context()
    x = np.ones((8, 16), np.float32)
    old = htp.bind(ctx.compile(scales.twice, "pto-a2a3sim", tmp_path / "p"), ctx)
    assert old.run(x=x)["y"][0, 0] == 2.0
    new = htp.bind(ctx.compile(scales.thrice, "pto-a2a3sim", tmp_path / "p", force=True), ctx)
    with pytest.raises(htp.RunError, match="was replaced after this binding read it"):
        old.run(x=x)
    assert new.run(x=x)["y"][0, 0] == 3.0
    assert htp.bind(tmp_path / "p", ctx).run(x=x)["y"][0, 0] == 3.0
