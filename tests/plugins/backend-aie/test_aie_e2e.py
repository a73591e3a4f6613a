"""End to end on aie-sim compared with NumPy: compile each program of programs/ (tile, WSP, CSP and Axe
layouts — the real dialect plugins) for an AIE target with htp-host, run the package with `htp-host run`
(the aie.sim binding), and compare the outputs with NumPy. The emitted aie.mlir of vector add and GEMM is
compared with the goldens the unit tests check too."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_column_major_memory_layouts_move_through_dma_patterns": [("layout `mem` facet (strides, order)", "aie-npu1")],
    "test_csp_three_stage_pipeline": [("CSP program (processes, channels)", "aie-npu1")],
    "test_replicated_csp_process_runs_on_one_core_per_replica": [
        ("CSP replicated process (`replicate`)", "aie-npu1"), ("CSP processes with different trip counts", "aie-npu1")],
    "test_an_ascend_dispatch_policy_compiles_with_a_note_that_it_has_no_effect": [("schedule `dispatch`", "aie-npu1")],
}

HERE = pathlib.Path(__file__).resolve().parent
HOST = os.environ["HTP_HOST"]
PLUGIN_DIR = pathlib.Path(os.environ["HTP_PLUGIN_DIR"])
PLUGINS = [arg for name in ("dialect-tile", "dialect-wsp", "dialect-csp", "layout-axe", "backend-aie")
           for arg in ("--plugins", str(PLUGIN_DIR / f"htp-{name}.so"))]


def compile_program(tmp, program, target="aie-npu1"):
    pkg = tmp / "pkg"
    r = subprocess.run([HOST, *PLUGINS, "compile", str(HERE / "programs" / program), "--target", target, "-o", str(pkg)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return pkg


def run_package(tmp, pkg, entry=None, scalars=None, **inputs):
    tmp.mkdir(parents=True, exist_ok=True)
    args = [HOST, *PLUGINS, "run", str(pkg), "--outputs", str(tmp / "out"), "--cache", str(tmp / "cache"),
            "--run-dir", str(tmp / "run")] + (["--entry", entry] if entry else [])
    for name, value in (scalars or {}).items():
        args += ["--scalar", f"{name}={value}"]
    for name, array in inputs.items():
        np.save(tmp / f"{name}.npy", array)
        args += ["--inputs", f"{name}={tmp / (name + '.npy')}"]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return {p.stem: np.load(p) for p in (tmp / "out").glob("*.npy")}


def rand(*shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def design_text(pkg, entry):
    return (pkg / "codegen" / "aie" / entry / "aie.mlir").read_text()


def test_vector_add_over_four_cores(tmp_path):
    a, b = rand(128, 64, seed=1), rand(128, 64, seed=2)
    pkg = compile_program(tmp_path, "vadd.py")
    assert design_text(pkg, "vadd") == (HERE / "golden" / "vadd.aie.mlir").read_text()
    out = run_package(tmp_path, pkg, A=a, B=b)
    np.testing.assert_array_equal(out["C"], a + b)


def test_gemm_golden(tmp_path):
    pkg = compile_program(tmp_path, "gemm_2x2.py")
    assert design_text(pkg, "gemm") == (HERE / "golden" / "gemm_2x2.aie.mlir").read_text()


@pytest.mark.parametrize("program,cores", [("gemm_2x1.py", 2), ("gemm_2x2.py", 4)])
def test_tiled_gemm(tmp_path, program, cores):
    a, b = rand(64, 32, seed=3), rand(32, 64, seed=4)
    pkg = compile_program(tmp_path, program)
    out = run_package(tmp_path, pkg, A=a, B=b)
    np.testing.assert_allclose(out["C"], a @ b, rtol=1e-5, atol=1e-5)
    import json
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert len(report["cores"]) == cores


def test_csp_three_stage_pipeline(tmp_path):
    x = rand(64, 32, seed=5)
    out = run_package(tmp_path, compile_program(tmp_path, "pipeline.py"), X=x)
    np.testing.assert_allclose(out["Y"], (x + 1) ** 2, rtol=1e-6, atol=1e-6)


def test_npu2_target_runs_too(tmp_path):
    a, b = rand(128, 64, seed=6), rand(128, 64, seed=7)
    out = run_package(tmp_path, compile_program(tmp_path, "vadd.py", "aie-npu2"), A=a, B=b)
    np.testing.assert_array_equal(out["C"], a + b)


def test_python_api_compile_and_bind_run(tmp_path):
    """ctx.compile(fn, target="aie-npu1") then htp.bind(pkg).run(A=a, B=b): DLPack tensors into aie.sim."""
    import importlib.util

    import htp

    ctx = htp.Context(plugins=[PLUGINS[i] for i in range(1, len(PLUGINS), 2)], use_environment=False)
    spec = importlib.util.spec_from_file_location("aie_gemm_2x2", HERE / "programs" / "gemm_2x2.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pkg = ctx.compile(module.gemm, target="aie-npu1", out=tmp_path / "pkg")
    assert [e["name"] for e in pkg.entrypoints] == ["gemm"]
    a, b = rand(64, 32, seed=8), rand(32, 64, seed=9)
    result = htp.bind(pkg, ctx).run(A=a, B=b, cache_dir=tmp_path / "cache")
    np.testing.assert_allclose(result["C"], a @ b, rtol=1e-5, atol=1e-5)
    assert result.binding == "aie.sim"
    assert result.report["path"] == "simulator"


def test_column_major_memory_layouts_move_through_dma_patterns(tmp_path):
    """The layouts' memory facet (column-major local parts): a mem tile's dimensionsToStream for B's shards and
    the cores' for C's joined blocks (gemm_t), the shim's dma_memcpy_nd pattern where the shim feeds (gemm_b)
    or drains (add_t) the cores directly; each against NumPy."""
    pkg = compile_program(tmp_path, "gemm_colmajor.py")
    assert design_text(pkg, "gemm_t") == (HERE / "golden" / "gemm_colmajor.aie.mlir").read_text()
    transpose_32x64 = "[1, 1, 64, 32][0, 0, 1, 64]"
    assert f"%arg1[0, 0, 0, 0]{transpose_32x64}" in design_text(pkg, "gemm_b")
    assert f"%arg2[0, 0, 0, 0]{transpose_32x64}" in design_text(pkg, "add_t")
    a, b = rand(64, 32, seed=12), rand(32, 64, seed=13)
    for entry in ("gemm_t", "gemm_b"):
        out = run_package(tmp_path / entry, pkg, entry, A=a, B=b)
        np.testing.assert_allclose(out["C"], a @ b, rtol=1e-5, atol=1e-5)
    x, y = rand(32, 64, seed=14), rand(32, 64, seed=15)
    np.testing.assert_array_equal(run_package(tmp_path / "add_t", pkg, "add_t", X=x, Y=y)["Z"], x + y)


def test_memory_order_keyword(tmp_path):
    """`Layout(..., order=[1, 0])` raises Uses.Layout(kind=axe, facet=mem), which backend-aie accepts: the
    column-major operand moves with a transposing shim pattern."""
    r = subprocess.run([HOST, *PLUGINS, "compile", str(HERE / "programs" / "add_order.py"), "--target", "aie-npu1",
                        "-o", str(tmp_path / "pkg")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    pkg = tmp_path / "pkg"
    assert "%arg0[0, 0, 0, 0][1, 1, 64, 32][0, 0, 1, 64]" in design_text(pkg, "add_o")
    x, y = rand(32, 64, seed=18), rand(32, 64, seed=19)
    np.testing.assert_array_equal(run_package(tmp_path, pkg, X=x, Y=y)["Z"], x + y)


def test_inout_tensor_is_read_and_written(tmp_path):
    """Y is InOut: each core gets its shard of Y and writes it back (a FIFO each way, the same host buffer in
    the runtime sequence); it updates half its rows, and the other half keeps Y's values."""
    pkg = compile_program(tmp_path, "inout_half.py")
    text = design_text(pkg, "axpy_half")
    assert "metadata = @in_Y_L2" in text and "metadata = @out_Y_L2" in text
    assert "@out_Y_0(%tile_0_2 dimensionsToStream" in design_text(pkg, "axpy_half_cm")
    x, y = rand(64, 32, seed=20), rand(64, 32, seed=21)
    want = y.copy()
    want[0:16] += x[0:16]
    want[32:48] += x[32:48]
    for entry in ("axpy_half", "axpy_half_cm"):
        np.testing.assert_array_equal(run_package(tmp_path / entry, pkg, entry, X=x, Y=y.copy())["Y"], want)


def test_replicated_csp_process_runs_on_one_core_per_replica(tmp_path):
    """replicate(worker, 2): two worker cores with channels of their own; the generator and the collector
    rotate over them."""
    import json
    pkg = compile_program(tmp_path, "replicated_workers.py")
    text = design_text(pkg, "fanout")
    for fifo in ("ch_work_r0", "ch_work_r1", "ch_done_r0", "ch_done_r1"):
        assert f"aie.objectfifo @{fifo}(" in text
    x = rand(64, 32, seed=22)
    np.testing.assert_array_equal(run_package(tmp_path, pkg, X=x)["Y"], x + x)
    cores = {c["name"]: c["calls"] for c in json.loads((tmp_path / "run" / "report.json").read_text())["cores"]}
    assert cores == {"generator": 4, "worker[0]": 2, "worker[1]": 2, "collector": 4}


def test_runtime_scalar_reaches_the_kernel(tmp_path):
    """`s: Scalar[f32]` of an entry kernel: a runtime-sequence parameter of one element, moved by a FIFO."""
    pkg = compile_program(tmp_path, "scale_scalar.py")
    assert "aie.objectfifo @in_s(" in design_text(pkg, "scale")
    x = rand(32, 32, seed=23)
    np.testing.assert_array_equal(run_package(tmp_path, pkg, scalars={"s": 2.5}, X=x)["Y"], x * np.float32(2.5))


def test_the_simulator_applies_stream_dimensions(tmp_path):
    """Without the mem tile's dimensionsToStream on B's shards the cores get B's blocks row-major while the
    kernel reads them column-major: aie-sim computes a @ b with the blocks transposed, not a @ b."""
    import json
    pkg = compile_program(tmp_path, "gemm_colmajor.py")
    fifos_path = pkg / "codegen" / "aie" / "gemm_t" / "fifos.json"
    fifos = json.loads(fifos_path.read_text())
    for f in fifos["fifos"]:
        if f["name"] in ("in_B_0", "in_B_1"):
            assert f["producer_dims"], f
            f["producer_dims"] = []
    fifos_path.write_text(json.dumps(fifos))
    # The package records its files' hashes: record the hand-broken design's, as a rebuild would.
    import hashlib
    manifest_path = pkg / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    data = fifos_path.read_bytes()
    for f in manifest["files"]:
        if f["path"] == "codegen/aie/gemm_t/fifos.json":
            f["sha256"], f["size"] = hashlib.sha256(data).hexdigest(), len(data)
    manifest_path.write_text(json.dumps(manifest, indent=2))
    a, b = rand(64, 32, seed=16), rand(32, 64, seed=17)
    out = run_package(tmp_path, pkg, "gemm_t", A=a, B=b)["C"]
    blocks_transposed = np.hstack([b[:, :32].T, b[:, 32:].T])
    np.testing.assert_allclose(out, a @ blocks_transposed, rtol=1e-5, atol=1e-5)


def test_cores_reading_more_tensors_than_dma_channels_run_packed(tmp_path):
    x, y, w = rand(32, 64, seed=7), rand(32, 64, seed=8), rand(32, 64, seed=9)
    pkg = compile_program(tmp_path, "three_inputs.py")
    packed = json.loads((pkg / "codegen/aie/add3/orchestration.json").read_text())["kernels"]["add3"]["packed"]
    assert packed["cores"] == 2 and packed["in_bytes"] == 2 * 3 * 16 * 64 * 4
    out = run_package(tmp_path / "run", pkg, x=x, y=y, w=w)
    np.testing.assert_array_equal(out["z"], x + y + w)


@pytest.mark.parametrize("program,message", [
    ("bad_grid.py", "bad_grid.py:7:1: error: kernel 'gemm' has mapping [8,4] = 32 cores, but device npu1 "
                    "(4 columns x 4 compute rows = 16 compute tiles) has 16 [aie.grid-too-large]"),
    ("bad_footprint.py", "bad_footprint.py:8:1: error: entry 'gemm': aie.tile(0, 2): compute tile needs 197632 bytes "
                         "(@in_A_0 1 x 65536, @in_B 1 x 65536, @out_C_0 1 x 65536, the core stack 1024) but has 65536 "
                         "[aie.validate.memory]"),
    ("bad_two_producers.py", "bad_two_producers.py:8:10: error: channel 'c1' has 2 producers ('top', 'bottom'); an AIE "
                             "object FIFO has exactly one producer core [aie.csp-route]"),
    ("bad_replicated.py", "bad_replicated.py:10:11: error: channel 'mid' joins 2 producer replicas with 4 consumer "
                          "replicas; AIE pairs replicas one to one or splits a channel round-robin [aie.csp-replicas]"),
])
def test_bad_input_is_a_compile_error(tmp_path, program, message):
    r = subprocess.run([HOST, *PLUGINS, "compile", str(HERE / "programs" / program), "--target", "aie-npu1", "-o",
                        str(tmp_path / "pkg")], capture_output=True, text=True)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert not (tmp_path / "pkg").exists()


def test_an_ascend_dispatch_policy_compiles_with_a_note_that_it_has_no_effect(tmp_path):
    r = subprocess.run([HOST, *PLUGINS, "compile", str(HERE / "programs" / "ascend_schedule.py"), "--target", "aie-npu1",
                        "-o", str(tmp_path / "pkg")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for note in ("dispatch(work_steal) of workload 'vadd' has no effect on npu1: AIE has no task schedulers to choose "
                 "between", "streams(2) of workload 'vadd' has no effect on npu1: AIE has no issue streams",
                 "stream_by(...) of workload 'vadd' has no effect on npu1: AIE has no issue streams",
                 "task_window(8) of workload 'vadd' has no effect on npu1: its spatial mapping runs 4 tasks at once"):
        assert "ascend_schedule.py:25:1: note: " + note in r.stderr, r.stderr
    a, b = rand(128, 64, seed=21), rand(128, 64, seed=22)
    np.testing.assert_allclose(run_package(tmp_path, tmp_path / "pkg", "vadd", A=a, B=b)["C"], a + b, rtol=1e-6)
    r = subprocess.run([HOST, *PLUGINS, "compile", str(HERE / "programs" / "ascend_schedule.py"), "--target",
                        "pto-a2a3sim", "-o", str(tmp_path / "pto")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr  # the same source for Ascend, where the directives mean something


def test_a_task_window_smaller_than_the_cores_a_spatial_mapping_runs_at_once_is_an_error(tmp_path):
    text = (HERE / "programs" / "ascend_schedule.py").read_text().replace("task_window(8)", "task_window(2)")
    (tmp_path / "window.py").write_text(text)
    r = subprocess.run([HOST, *PLUGINS, "compile", str(tmp_path / "window.py"), "--target", "aie-npu1", "-o",
                        str(tmp_path / "pkg")], capture_output=True, text=True)
    assert r.returncode != 0
    assert ("window.py:25:1: error: task_window(2) of workload 'vadd' allows fewer tasks in flight than the 4 cores "
            "its spatial mapping runs at once; put several grid points on a core with tile(axis, f) or widen the window "
            "[aie.schedule]") in r.stderr, r.stderr


def test_package_is_deterministic_and_verifies(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = compile_program(tmp_path / "a", "pipeline.py"), compile_program(tmp_path / "b", "pipeline.py")
    for rel in ("aie.mlir", "mapping.json", "fifos.json", "kernels/proc_square.cc", "host.cpp", "build.sh"):
        assert (first / "codegen/aie/pipeline" / rel).read_bytes() == (second / "codegen/aie/pipeline" / rel).read_bytes()
    r = subprocess.run([HOST, *PLUGINS, "verify", str(first)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_rerun_of_an_unchanged_package_compiles_nothing(tmp_path):
    import json
    pkg = compile_program(tmp_path, "vadd.py")
    a, b = rand(128, 64, seed=10), rand(128, 64, seed=11)
    run_package(tmp_path, pkg, A=a, B=b)
    assert json.loads((tmp_path / "run" / "report.json").read_text())["kernels"]["cache_hit"] is False
    out = run_package(tmp_path, pkg, A=a, B=b)
    assert json.loads((tmp_path / "run" / "report.json").read_text())["kernels"]["cache_hit"] is True
    np.testing.assert_array_equal(out["C"], a + b)
