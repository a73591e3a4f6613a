"""backend-pto through htp-host: what the resolver rejects for the PTO targets, a tile that does not fit UB
reported at the kernel, and the a2a3 binding without CANN (the exact message, the recipe in the package).
Needs HTP_HOST and HTP_PLUGIN_DIR (set by ctest)."""
import os
import pathlib
import subprocess

import numpy as np

HOST = [os.environ["HTP_HOST"], "--plugins", os.environ["HTP_PLUGIN_DIR"]]
PROGRAMS = pathlib.Path(__file__).parent / "programs"


def htp(*args, env=None):
    return subprocess.run(HOST + [str(a) for a in args], capture_output=True, text=True, env=env)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_pto_intrinsic_on_an_aie_target_is_a_resolver_error():
    r = htp("resolve", "--target", "aie-npu1", "--uses", "Uses.Intrinsic(set=pto,op=add)")
    assert r.returncode == 1
    assert ("error: Uses.Intrinsic(op=add,set=pto) is not accepted by target aie-npu1 — no selected component "
            "accepts Uses.Intrinsic(op=add,set=pto); pto.backend accepts it for pto-a2a3sim, pto-a2a3 "
            "[resolve.unaccepted]") in r.stderr


def test_schedule_directive_the_target_cannot_honour_is_rejected_at_the_directive(tmp_path):
    prog = write(tmp_path, "buf.py", (
        "from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, exp\n"
        "from htp.dialects.wsp import workload, schedule, P, buffer\n\n\n"
        "@kernel\n"
        "def ex(x: In[Tensor[32, 128, f32]], y: Out[Tensor[32, 128, f32]]):\n"
        "    store(y, exp(load(x)))\n\n\n"
        "@workload\n"
        "def w(A: In[Tensor[64, 128, f32]], B: Out[Tensor[64, 128, f32]]):\n"
        "    for i in P(2):\n"
        "        ex[i](A.tile(i, 0), B.tile(i, 0))\n\n\n"
        "@schedule(w)\n"
        "def s():\n"
        "    buffer(\"A\", \"L2\")\n"))
    r = htp("compile", prog, "--target", "pto-a2a3sim", "-o", tmp_path / "pkg")
    assert r.returncode == 1
    assert f"{prog}:18:5: error: Uses.Schedule(directive=buffer,policy=L2) is not accepted by target pto-a2a3sim" in r.stderr
    assert not (tmp_path / "pkg").exists()


def test_tile_larger_than_ub_is_reported_at_the_kernel(tmp_path):
    prog = write(tmp_path, "big.py", (
        "from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, exp\n\n\n"
        "@kernel\n"
        "def big(x: In[Tensor[512, 128, f32]], y: Out[Tensor[512, 128, f32]]):\n"
        "    store(y, exp(load(x)))\n"))
    r = htp("compile", prog, "--target", "pto-a2a3sim", "-o", tmp_path / "pkg")
    assert r.returncode == 1
    assert (f"{prog}:5:1: error: tile '_t0' [512, 128] f32 needs 262144 bytes of UB, but UB holds 196608 bytes per "
            "AIV core (a2a3) [pto.memory]") in r.stderr
    assert not (tmp_path / "pkg").exists()


def test_a2a3_without_cann_names_exactly_what_is_missing(tmp_path):
    pkg = tmp_path / "pkg"
    assert htp("compile", PROGRAMS / "softmax.py", "--target", "pto-a2a3", "-o", pkg).returncode == 0
    np.save(tmp_path / "x.npy", np.zeros((64, 256), np.float32))
    env = {k: v for k, v in os.environ.items()
           if k not in ("ASCEND_HOME_PATH", "PTO_RUNTIME_ROOT", "PTO_ISA_ROOT", "CROSS_CXX")}
    env["PATH"] = "/usr/bin:/bin"
    r = htp("run", pkg, "-i", f"X={tmp_path / 'x.npy'}", "-o", tmp_path / "out", "--run-dir", tmp_path / "run", env=env)
    assert r.returncode != 0
    recipe = pkg / "build" / "a2a3" / "build_recipe.sh"
    assert (
        "error: target pto-a2a3 builds and runs on an Ascend device with the CANN toolchain, which is incomplete: "
        "missing ASCEND_HOME_PATH (the CANN installation: not set); ccec (the AI Core compiler: not in "
        "$ASCEND_HOME_PATH/compiler/ccec_compiler/bin nor on PATH); the aarch64 cross compiler (CROSS_CXX, "
        "aarch64-linux-gnu-g++ on PATH, or $ASCEND_HOME_PATH/toolkit/toolchain/hcc/bin/aarch64-target-linux-gnu-g++); "
        "PTO_RUNTIME_ROOT (a pto-runtime checkout, hw-native-sys/simpler 6ebaf7715: not set); PTO_ISA_ROOT (a "
        f"PTO-ISA checkout, hw-native-sys/pto-isa cd4a3d3f: not set). The build recipe is in {recipe} "
        "[pto.a2a3.toolchain]") in r.stderr
    text = recipe.read_text()
    assert "--cce-aicore-arch=dav-c220-vec" in text and "kernels/aiv/softmax_rows.cpp" in text
    assert "kernels/orchestration/softmax.cpp" in text
    assert htp("verify", pkg).returncode == 0  # the recipe sits in build/, outside the verified files


def test_emit_reuses_the_package_model_legalize_built(tmp_path):
    """pto.legalize builds the package model to check it; pto.emit writes that same model (issue 18: the
    package was built twice). The debug log says which happened."""
    examples = pathlib.Path(__file__).resolve().parents[3] / "examples"
    r = htp("--log-level", "debug", "compile", examples / "vector_add.py", "--target", "pto-a2a3sim",
            "-o", tmp_path / "pkg")
    assert r.returncode == 0, r.stderr
    assert "pto.emit: the package model pto.legalize built is reused" in r.stderr
    assert "pto.emit: building the package model" not in r.stderr
