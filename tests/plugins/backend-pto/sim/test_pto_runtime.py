"""The programs of tests/plugins/backend-pto/programs on the real pto-runtime (docs/backends/pto.md §8):
each is compiled for pto-a2a3sim by htp.Context, and the package, unchanged, runs through
htp.bind(pkg).run(...) on a built pto-runtime (hw-native-sys/simpler 6ebaf7715, a2a3sim platform) with
PTO-ISA cd4a3d3f, and is compared with NumPy. Needs HTP_PLUGIN_DIR (set by ctest) and
HTP_TEST_PTO_RUNTIME_ROOT / HTP_TEST_PTO_ISA_ROOT (skipped, saying why, without them)."""
import importlib.util
import os
import pathlib

import numpy as np
import pytest

import htp

RUNTIME_ROOT = os.environ.get("HTP_TEST_PTO_RUNTIME_ROOT", "")
ISA_ROOT = os.environ.get("HTP_TEST_PTO_ISA_ROOT", "")

PROGRAMS = pathlib.Path(__file__).parent.parent / "programs"
RNG = np.random.default_rng(11)


@pytest.fixture(scope="module", autouse=True)
def real_runtime():
    if not RUNTIME_ROOT or not ISA_ROOT:
        pytest.skip("HTP_TEST_PTO_RUNTIME_ROOT and HTP_TEST_PTO_ISA_ROOT are not both set: there is no built "
                    "pto-runtime (hw-native-sys/simpler 6ebaf7715) and PTO-ISA (cd4a3d3f) checkout to run on")
    os.environ["PTO_RUNTIME_ROOT"] = RUNTIME_ROOT
    os.environ["PTO_ISA_ROOT"] = ISA_ROOT
    yield
    del os.environ["PTO_RUNTIME_ROOT"], os.environ["PTO_ISA_ROOT"]


def compile_and_run(ctx, cache, tmp_path, program, entry_names, **inputs):
    spec = importlib.util.spec_from_file_location(program, PROGRAMS / f"{program}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pkg = ctx.compile([getattr(module, n) for n in entry_names], target="pto-a2a3sim", out=str(tmp_path / "pkg"))
    result = htp.bind(pkg, ctx).run(cache_dir=cache, run_dir=tmp_path / "run", **inputs)
    assert result.binding == "pto.a2a3sim"
    assert result.report["path"] == "pto-runtime", result.report
    assert result.report["ok"] is True
    assert result.report["runtime"]["revision"].startswith("6ebaf7715")
    assert result.report["runtime"]["isa_revision"].startswith("cd4a3d3f")
    return result


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_elementwise_add_over_2d_grid(ctx, cache, tmp_path):
    a, b = f32(256, 512), f32(256, 512)
    r = compile_and_run(ctx, cache, tmp_path, "vadd_grid", ["vadd", "vadd_schedule"], A=a, B=b)
    np.testing.assert_array_equal(r["C"], a + b)


def test_rmsnorm_with_runtime_rows(ctx, cache, tmp_path):
    x = f32(96, 128)
    r = compile_and_run(ctx, cache, tmp_path, "rmsnorm", ["rmsnorm", "rmsnorm_schedule"], X=x, eps=1e-6)
    np.testing.assert_allclose(r["Y"], x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6), rtol=1e-5,
                               atol=1e-5)


def test_softmax(ctx, cache, tmp_path):
    x = f32(64, 256)
    r = compile_and_run(ctx, cache, tmp_path, "softmax", ["softmax"], X=x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(r["Y"], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_tiled_gemm_on_cube_cores(ctx, cache, tmp_path):
    a, b = f32(256, 256), f32(256, 256)
    r = compile_and_run(ctx, cache, tmp_path, "gemm", ["gemm"], A=a, B=b)
    np.testing.assert_allclose(r["C"], a @ b, rtol=1e-4, atol=1e-3)


def test_ragged_decode_attention(ctx, cache, tmp_path):
    blocks = np.array([3, 1, 0, 2], dtype=np.int32)
    starts = np.array([0, 48, 64, 64], dtype=np.int32)
    q, k, v = f32(4, 64) * 0.1, f32(96, 64) * 0.1, f32(96, 64)
    o = f32(4, 64)
    r = compile_and_run(ctx, cache, tmp_path, "ragged_decode", ["ragged_decode", "ragged_decode_schedule"],
                        QT=np.ascontiguousarray(q.T), K=k, V=v, O=o, starts=starts, blocks=blocks)
    want = o.copy()
    for b in range(4):
        for j in range(blocks[b]):
            rows = slice(starts[b] + 16 * j, starts[b] + 16 * (j + 1))
            want[b] += (np.exp(k[rows] @ q[b])[:, None] * v[rows]).sum(axis=0)
    np.testing.assert_allclose(r["O"], want, rtol=1e-4, atol=1e-4)


def test_moe_routing_with_sel(ctx, cache, tmp_path):
    routing = [[0, 3], [], [7], [1, 2, 5], [4], [6, 0]]
    indptr = np.cumsum([0] + [len(r) for r in routing]).astype(np.int32)
    indices = np.array([e for r in routing for e in r], dtype=np.int32)
    x, w, y = f32(6, 64), f32(8, 64), f32(6, 64)
    r = compile_and_run(ctx, cache, tmp_path, "moe", ["moe", "moe_schedule"], X=x, W=w, Y=y, indptr=indptr,
                        indices=indices)
    want = y.copy()
    for t, sel in enumerate(routing):
        for e in sel:
            want[t] += np.maximum(x[t] * w[e], 0)
    np.testing.assert_allclose(r["Y"], want, rtol=1e-6, atol=1e-6)


def test_csp_load_compute_store_pipeline(ctx, cache, tmp_path):
    x = f32(256, 128)
    r = compile_and_run(ctx, cache, tmp_path, "csp_pipeline", ["pipeline"], X=x)
    np.testing.assert_allclose(r["Y"], np.exp(x) + 1, rtol=1e-6)


def test_f16_gemm_kernel_as_its_own_entry(ctx, cache, tmp_path):
    a = (RNG.standard_normal((128, 256)) * 0.5).astype(np.float16)
    b = (RNG.standard_normal((256, 128)) * 0.5).astype(np.float16)
    r = compile_and_run(ctx, cache, tmp_path, "gemm_f16", ["gemm"], a=a, b=b)
    assert r["c"].dtype == np.float16
    np.testing.assert_allclose(r["c"].astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=2e-2, atol=2e-2)


def test_rank3_tensor_views(ctx, cache, tmp_path):
    x = f32(4, 32, 64)
    r = compile_and_run(ctx, cache, tmp_path, "rank3_sum", ["slice_sum"], x=x)
    np.testing.assert_allclose(r["y"], x.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_unchanged_package_rebuilds_nothing(ctx, cache, tmp_path):
    a, b = f32(256, 512), f32(256, 512)
    compile_and_run(ctx, cache, tmp_path / "first", "vadd_grid", ["vadd", "vadd_schedule"], A=a, B=b)
    again = compile_and_run(ctx, cache, tmp_path / "second", "vadd_grid", ["vadd", "vadd_schedule"], A=a, B=b)
    assert again.report["build"]["cache"] == "hit"
    assert again.report["build"]["compiler_invocations"] == 0
