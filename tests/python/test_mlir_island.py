"""The MLIR island (htp.islands.native): a pass hands each tile kernel to mlir-opt, mlir-translate, llc and cc
through the host's island runner and packages a native CPU build of it. Checked: the numbers against NumPy and
against the simulator, the records under ir/islands/ (exact command, tool version, input, output), the content
cache, a user-given pipeline, and every bad input of the issue (tool missing, failing, hanging, writing
garbage; errors mapped to source lines). The real tools come from Debian (mlir-19-tools, llvm-19); without
them the tests that need them are skipped, saying so."""
from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import htp
from htp.islands import mlir, native

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

import rmsnorm  # noqa: E402
import softmax  # noqa: E402

HAVE_TOOLS = all((pathlib.Path(mlir.DEFAULT_BIN) / t).exists() for t in ("mlir-opt", "mlir-translate", "llc"))
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="mlir-19-tools / llvm-19 are not installed "
                                 "(scripts/bootstrap.sh installs them)")
STEP = "ir/islands/mlir.native-kernels/softmax_rows.mlir-opt"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh island cache per test, so cache hits are the test's own."""
    monkeypatch.setenv("HTP_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def softmax_reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@needs_tools
def test_the_native_kernel_matches_numpy_and_the_simulator(tmp_path, cache):
    ctx = htp.Context(plugins=[native])
    pkg = ctx.compile(softmax.softmax, "pto-a2a3sim", tmp_path / "pkg")
    assert "mlir.native-kernels" in pkg.passes
    kernel = native.native_kernels(pkg)["softmax_rows"]
    X = softmax.make_inputs(np.random.default_rng(0))["X"]
    sim = htp.bind(pkg, ctx).run(X=X)["Y"]
    tiles = [kernel(x=np.ascontiguousarray(X[i * 16:(i + 1) * 16]))["y"] for i in range(X.shape[0] // 16)]
    got = np.concatenate(tiles)
    np.testing.assert_allclose(got, softmax_reference(X.astype(np.float64)), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got, sim, rtol=1e-5, atol=1e-7)


@needs_tools
def test_rmsnorm_through_the_island_matches_numpy(tmp_path, cache):
    ctx = htp.Context(plugins=[native])
    pkg = ctx.compile(rmsnorm.ENTRIES["pto-a2a3sim"], "pto-a2a3sim", tmp_path / "pkg")
    kernels = native.native_kernels(pkg)
    [(name, kernel)] = kernels.items()
    inputs = rmsnorm.make_inputs(np.random.default_rng(3))
    want = rmsnorm.reference(**{k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()})
    sim = htp.bind(pkg, ctx).run(**inputs)
    for out, value in want.items():
        np.testing.assert_allclose(sim[out], value, rtol=1e-4, atol=1e-5)
    assert kernel.params, f"kernel {name} has parameters"


@needs_tools
def test_the_package_records_command_version_input_and_output(tmp_path, cache):
    pkg = htp.Context(plugins=[native]).compile(softmax.softmax, "pto-a2a3sim", tmp_path / "pkg")
    record = json.loads((pkg.path / STEP / "command.json").read_text())
    opt = str(pathlib.Path(mlir.DEFAULT_BIN) / "mlir-opt")
    assert record["command"] == [opt, *mlir.DEFAULT_PIPELINE]
    version = subprocess.run([opt, "--version"], capture_output=True, text=True).stdout
    assert record["tool_version"] and record["tool_version"] in version
    assert record["stdin"] == "input.mlir" and record["stdout"] == "lowered.mlir" and record["cached"] is False
    source = (pkg.path / STEP / "input.mlir").read_text()
    assert source.startswith("module") or "func.func @softmax_rows" in source
    assert str(ROOT / "examples" / "softmax.py") in source, "ops carry their source locations"
    assert "llvm.func @softmax_rows" in (pkg.path / STEP / "lowered.mlir").read_text()
    for step, files in (("mlir-translate", ["lowered.mlir", "kernel.ll"]), ("llc", ["kernel.ll", "kernel.o"]),
                        ("cc", ["kernel.o", "kernel.so"])):
        d = pkg.path / f"ir/islands/mlir.native-kernels/softmax_rows.{step}"
        assert all((d / f).is_file() for f in files + ["command.json"]), step
    manifest_files = {f["path"] for f in pkg.manifest["files"]} | {f["path"] for f in pkg.manifest["volatile_files"]}
    assert f"{STEP}/command.json" in manifest_files and "native/softmax_rows.so" in manifest_files


@needs_tools
def test_a_second_compile_takes_every_step_from_the_cache(tmp_path, cache):
    ctx = htp.Context(plugins=[native])
    ctx.compile(softmax.softmax, "pto-a2a3sim", tmp_path / "one")
    pkg = ctx.compile(softmax.softmax, "pto-a2a3sim", tmp_path / "two", force=True)
    records = [json.loads(p.read_text()) for p in (pkg.path / "ir/islands").rglob("command.json")]
    assert len(records) == 4 and all(r["cached"] for r in records)
    assert (pkg.path / "native/softmax_rows.so").read_bytes() == (tmp_path / "one/native/softmax_rows.so").read_bytes()


@needs_tools
def test_a_user_pipeline_is_run_and_recorded(tmp_path, cache):
    pipeline = ["--canonicalize", "--cse", *mlir.DEFAULT_PIPELINE]
    pkg = htp.Context(plugins=[native]).compile(softmax.softmax, "pto-a2a3sim", tmp_path / "pkg",
                                                options={"mlir.pipeline": pipeline})
    assert json.loads((pkg.path / STEP / "command.json").read_text())["command"][1:] == pipeline
    X = softmax.make_inputs(np.random.default_rng(1))["X"][:16].copy()
    np.testing.assert_allclose(native.native_kernels(pkg)["softmax_rows"](x=X)["y"], softmax_reference(X),
                               rtol=1e-5, atol=1e-7)


# A pipeline given as one string was taken character by character ("Too many positional arguments").
def test_a_pipeline_given_as_one_string_is_split_into_arguments(tmp_path, cache):
    pipeline = ["--canonicalize", *mlir.DEFAULT_PIPELINE]
    pkg = htp.Context(plugins=[native]).compile(softmax.softmax, "pto-a2a3sim", tmp_path / "pkg",
                                                options={"mlir.pipeline": " ".join(pipeline)})
    assert json.loads((pkg.path / STEP / "command.json").read_text())["command"][1:] == pipeline


# ---- bad input ----------------------------------------------------------------------------------------


def fake_tools(tmp_path, monkeypatch, script: str) -> pathlib.Path:
    """A directory of LLVM tools where mlir-opt is `script` and the others are the real ones."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("mlir-translate", "llc"):
        real = pathlib.Path(mlir.DEFAULT_BIN) / tool
        if real.exists():
            (bin_dir / tool).symlink_to(real)
    fake = bin_dir / "mlir-opt"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("HTP_MLIR_BIN", str(bin_dir))
    return bin_dir


def compile_error(tmp_path, **kw) -> htp.CompileError:
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[native]).compile(softmax.softmax, "pto-a2a3sim", tmp_path / "pkg", **kw)
    assert not (tmp_path / "pkg").exists()
    return e.value


def test_a_missing_tool_names_the_debian_package(tmp_path, cache, monkeypatch):
    monkeypatch.setenv("HTP_MLIR_BIN", str(tmp_path / "nowhere"))
    e = compile_error(tmp_path)
    [d] = [d for d in e.errors if d.code == "island.tool-missing"]
    assert "install the Debian package mlir-19-tools" in d.message
    assert d.span["file"].endswith("softmax.py") and d.span["line"] > 0


def test_a_failing_tool_reports_its_stderr_tail(tmp_path, cache, monkeypatch):
    fake_tools(tmp_path, monkeypatch, "echo 'first line' >&2\necho 'mlir-opt: out of ideas' >&2\nexit 3\n")
    e = compile_error(tmp_path)
    [d] = [d for d in e.errors if d.code == "island.failed"]
    assert "exited with status 3" in d.message
    assert any("out of ideas" in n.message for n in d.notes)


def test_a_hanging_tool_is_killed_after_the_time_limit(tmp_path, cache, monkeypatch):
    fake_tools(tmp_path, monkeypatch, "echo 'thinking' >&2\nsleep 60\n")
    t0 = time.monotonic()
    e = compile_error(tmp_path, options={"mlir.timeout": 1})
    assert time.monotonic() - t0 < 20
    [d] = [d for d in e.errors if d.code == "island.timeout"]
    assert "did not finish within 1" in d.message and any("thinking" in n.message for n in d.notes)


@needs_tools
def test_garbage_from_a_tool_is_caught_by_the_next_step_with_its_stderr(tmp_path, cache, monkeypatch):
    fake_tools(tmp_path, monkeypatch, "cat > /dev/null\necho 'this is not MLIR {{{'\n")
    e = compile_error(tmp_path)
    [d] = [d for d in e.errors if d.code == "island.failed"]
    assert "softmax_rows.mlir-translate" in d.message
    located = [d for d in e.errors if d.code == "island.tool-error"]
    assert located and located[0].span["file"] == (
        "ir/islands/mlir.native-kernels/softmax_rows.mlir-translate/lowered.mlir")


def test_a_tool_error_at_a_source_location_is_reported_at_that_line(tmp_path, cache, monkeypatch):
    src = ROOT / "examples" / "softmax.py"
    fake_tools(tmp_path, monkeypatch, f"cat > /dev/null\necho '{src}:21:5: error: cannot vectorize this' >&2\nexit 1\n")
    e = compile_error(tmp_path)
    [d] = [d for d in e.errors if d.code == "island.tool-error"]
    assert d.span["file"] == str(src) and d.span["line"] == 21 and d.span["col"] == 4
    assert d.message == "mlir-opt: cannot vectorize this"


def test_an_unsupported_kernel_is_a_warning_and_skipped(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(mlir, "kernel_to_mlir", lambda k: (_ for _ in ()).throw(mlir.UnsupportedOp("frob", k["name"])))
    with pytest.warns(htp.CompileWarning, match="kernel 'softmax_rows' has no native build"):
        pkg = htp.Context(plugins=[native]).compile(softmax.softmax, "pto-a2a3sim", tmp_path / "pkg")
    assert json.loads((pkg.path / "native/kernels.json").read_text()) == {"kernels": []}
