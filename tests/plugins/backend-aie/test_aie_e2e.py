"""End to end on aie-sim compared with NumPy: compile each program for an AIE target with htp-host, run
the package with `htp-host run` (the aie.sim binding), and compare the outputs with NumPy.

The programs take their IR contract documents from JSON fixtures (fixtures/ir_fixture.cpp) until the
dialect plugins land."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
HOST = os.environ["HTP_HOST"]
PLUGINS = ["--plugins", os.environ["HTP_AIE_PLUGIN"], "--plugins", os.environ["HTP_IRFIX_PLUGIN"]]


def compile_program(tmp, program, target="aie-npu1"):
    pkg = tmp / "pkg"
    r = subprocess.run([HOST, *PLUGINS, "compile", str(HERE / "programs" / program), "--target", target, "-o", str(pkg)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return pkg


def run_package(tmp, pkg, **inputs):
    args = [HOST, *PLUGINS, "run", str(pkg), "--outputs", str(tmp / "out"), "--cache", str(tmp / "cache"),
            "--run-dir", str(tmp / "run")]
    for name, array in inputs.items():
        np.save(tmp / f"{name}.npy", array)
        args += ["--inputs", f"{name}={tmp / (name + '.npy')}"]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return {p.stem: np.load(p) for p in (tmp / "out").glob("*.npy")}


def rand(*shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def test_vector_add_over_four_cores(tmp_path):
    a, b = rand(128, 64, seed=1), rand(128, 64, seed=2)
    out = run_package(tmp_path, compile_program(tmp_path, "vadd.py"), A=a, B=b)
    np.testing.assert_array_equal(out["C"], a + b)


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
