"""End to end on pto-a2a3sim: each program in programs/ is compiled by htp.Context with the built-in
plugins, run with htp.bind(pkg).run(**arrays) on the a2a3sim binding and compared with NumPy.
Needs HTP_PLUGIN_DIR (set by ctest)."""
import importlib.util
import os
import pathlib

import numpy as np
import pytest

import htp

PROGRAMS = pathlib.Path(__file__).parent / "programs"
RNG = np.random.default_rng(7)


def compile_and_run(ctx, cache, tmp_path, program, entry_names, **inputs):
    spec = importlib.util.spec_from_file_location(program, PROGRAMS / f"{program}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pkg = ctx.compile([getattr(module, n) for n in entry_names], target="pto-a2a3sim", out=str(tmp_path / "pkg"))
    files = {f for f in pkg.files}
    assert "codegen/pto/kernel_config.py" in files and "codegen/pto/kernel_registry.json" in files
    result = htp.bind(pkg, ctx).run(cache_dir=cache, run_dir=tmp_path / "run", **inputs)
    assert result.binding == "pto.a2a3sim"
    assert result.report["path"] == "htp-cpu-sim"
    return result


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_elementwise_add_over_2d_grid(ctx, cache, tmp_path):
    a, b = f32(256, 512), f32(256, 512)
    r = compile_and_run(ctx, cache, tmp_path, "vadd_grid", ["vadd", "vadd_schedule"], A=a, B=b)
    np.testing.assert_array_equal(r["C"], a + b)
    assert r.report["tasks"] == 32


# A large eps changes the result visibly: the scalar must reach the kernel (scalars have their own slots).
@pytest.mark.parametrize("eps", [1e-6, 4.0])
def test_rmsnorm_with_runtime_rows(ctx, cache, tmp_path, eps):
    x = f32(96, 128)
    r = compile_and_run(ctx, cache, tmp_path, "rmsnorm", ["rmsnorm", "rmsnorm_schedule"], X=x, eps=eps)
    want = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)
    np.testing.assert_allclose(r["Y"], want, rtol=1e-5, atol=1e-5)
    assert r.report["tasks"] == 6


def test_softmax(ctx, cache, tmp_path):
    x = f32(64, 256)
    r = compile_and_run(ctx, cache, tmp_path, "softmax", ["softmax"], X=x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(r["Y"], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_tiled_gemm_on_cube_cores(ctx, cache, tmp_path):
    a, b = f32(256, 256), f32(256, 256)
    r = compile_and_run(ctx, cache, tmp_path, "gemm", ["gemm"], A=a, B=b)
    np.testing.assert_allclose(r["C"], a @ b, rtol=1e-4, atol=1e-3)
    registry = (pathlib.Path(r.run_dir).parent / "pkg" / "codegen" / "pto" / "kernel_registry.json").read_text()
    assert '"core_type": "aic"' in registry


def test_ragged_decode_attention(ctx, cache, tmp_path):
    blocks = np.array([3, 1, 0, 2], dtype=np.int32)
    starts = np.array([0, 48, 64, 64], dtype=np.int32)
    q, k, v = f32(4, 64) * 0.1, f32(96, 64) * 0.1, f32(96, 64)
    o = f32(4, 64)
    want = o.copy()  # O is inout: the run updates the caller's array in place
    r = compile_and_run(ctx, cache, tmp_path, "ragged_decode", ["ragged_decode", "ragged_decode_schedule"],
                        QT=np.ascontiguousarray(q.T), K=k, V=v, O=o, starts=starts, blocks=blocks)
    for b in range(4):
        for j in range(blocks[b]):
            rows = slice(starts[b] + 16 * j, starts[b] + 16 * (j + 1))
            want[b] += (np.exp(k[rows] @ q[b])[:, None] * v[rows]).sum(axis=0)
    np.testing.assert_allclose(r["O"], want, rtol=1e-4, atol=1e-4)
    assert r.report["tasks"] == 2 * int(blocks.sum())


def test_moe_routing_with_sel(ctx, cache, tmp_path):
    tokens, experts = 6, 8
    routing = [[0, 3], [], [7], [1, 2, 5], [4], [6, 0]]
    indptr = np.cumsum([0] + [len(r) for r in routing]).astype(np.int32)
    indices = np.array([e for r in routing for e in r], dtype=np.int32)
    x, w, y = f32(tokens, 64), f32(experts, 64), f32(tokens, 64)
    want = y.copy()  # Y is inout: the run updates the caller's array in place
    r = compile_and_run(ctx, cache, tmp_path, "moe", ["moe", "moe_schedule"], X=x, W=w, Y=y, indptr=indptr,
                        indices=indices)
    for t, sel in enumerate(routing):
        for e in sel:
            want[t] += np.maximum(x[t] * w[e], 0)
    np.testing.assert_allclose(r["Y"], want, rtol=1e-6, atol=1e-6)
    assert r.report["tasks"] == len(indices)


def test_csp_load_compute_store_pipeline(ctx, cache, tmp_path):
    x = f32(256, 128)
    r = compile_and_run(ctx, cache, tmp_path, "csp_pipeline", ["pipeline"], X=x)
    np.testing.assert_allclose(r["Y"], np.exp(x) + 1, rtol=1e-6)
    assert r.report["tasks"] == 24


def test_unchanged_package_rebuilds_nothing(ctx, cache, tmp_path):
    a, b = f32(256, 512), f32(256, 512)
    compile_and_run(ctx, cache, tmp_path / "first", "vadd_grid", ["vadd", "vadd_schedule"], A=a, B=b)
    again = compile_and_run(ctx, cache, tmp_path / "second", "vadd_grid", ["vadd", "vadd_schedule"], A=a, B=b)
    assert again.report["build"]["cache"] == "hit"
    assert again.report["build"]["compiler_invocations"] == 0


def test_f16_gemm_kernel_as_its_own_entry(ctx, cache, tmp_path):
    a = (RNG.standard_normal((128, 256)) * 0.5).astype(np.float16)
    b = (RNG.standard_normal((256, 128)) * 0.5).astype(np.float16)
    r = compile_and_run(ctx, cache, tmp_path, "gemm_f16", ["gemm"], a=a, b=b)
    assert r["c"].dtype == np.float16
    np.testing.assert_allclose(r["c"].astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=2e-2, atol=2e-2)
    assert r.report["tasks"] == 1


def test_rank3_tensor_views(ctx, cache, tmp_path):
    x = f32(4, 32, 64)
    r = compile_and_run(ctx, cache, tmp_path, "rank3_sum", ["slice_sum"], x=x)
    np.testing.assert_allclose(r["y"], x.sum(axis=0), rtol=1e-5, atol=1e-5)
