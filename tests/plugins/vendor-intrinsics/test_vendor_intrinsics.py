"""Vendor intrinsic sets end to end (docs/intrinsics.md): kernels spelled `pto.matmul(...)`, `aie.add(...)`
compiled with the built-in plugins, run on pto-a2a3sim (htp.bind(pkg).run) and aie-sim (`htp-host run`)
and compared with NumPy; the obligations and the lowered ops' set; the stubs the backends ship; and a set
used on a target whose backend does not accept it as an exact resolver error."""
import importlib
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import htp

HERE = pathlib.Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
HOST = os.environ["HTP_HOST"]
PLUGIN_DIR = pathlib.Path(os.environ["HTP_PLUGIN_DIR"])
RNG = np.random.default_rng(11)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def host(*args):
    return subprocess.run([HOST, "--plugins", str(PLUGIN_DIR), *args], capture_output=True, text=True, timeout=300)


def compile_cli(tmp, program, target):
    pkg = tmp / "pkg"
    r = host("compile", str(PROGRAMS / program), "--target", target, "-o", str(pkg))
    assert r.returncode == 0, r.stderr
    return pkg


def run_cli(tmp, pkg, **inputs):
    args = ["run", str(pkg), "--outputs", str(tmp / "out"), "--cache", str(tmp / "cache"), "--run-dir", str(tmp / "run")]
    for name, array in inputs.items():
        np.save(tmp / f"{name}.npy", array)
        args += ["--inputs", f"{name}={tmp / (name + '.npy')}"]
    r = host(*args)
    assert r.returncode == 0, r.stderr
    return {p.stem: np.load(p) for p in (tmp / "out").glob("*.npy")}


def obligations(pkg):
    with open(pkg / "manifest.json") as f:
        return [(o["capability"], o["span"]["line"]) for o in json.load(f)["capabilities"]["obligations"]]


# ----------------------------------------------------------------------------------------- pto-a2a3sim

@pytest.fixture(scope="module")
def ctx():
    return htp.Context(plugins=[str(PLUGIN_DIR)], use_environment=False)


def compile_python(ctx, tmp, program, entries):
    spec = importlib.util.spec_from_file_location(program, PROGRAMS / f"{program}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return ctx.compile([getattr(module, n) for n in entries], target="pto-a2a3sim", out=str(tmp / "pkg"))


def test_pto_matmul_runs_on_the_cube_cores_of_a2a3sim(ctx, tmp_path):
    pkg = compile_python(ctx, tmp_path, "pto_gemm", ["gemm"])
    a, b = f32(128, 128), f32(128, 128)
    r = htp.bind(pkg, ctx).run(cache_dir=tmp_path / "cache", run_dir=tmp_path / "run", A=a, B=b)
    assert (r.binding, r.report["path"]) == ("pto.a2a3sim", "htp-cpu-sim")
    np.testing.assert_allclose(r["C"], a @ b, rtol=1e-4, atol=1e-3)
    registry = json.loads((tmp_path / "pkg" / "codegen" / "pto" / "kernel_registry.json").read_text())
    assert "aic" in json.dumps(registry)  # pto.matmul's contract: core type AIC
    kernel = next((tmp_path / "pkg" / "codegen" / "pto" / "kernels" / "aic").glob("*.cpp")).read_text()
    assert "TMATMUL(" in kernel and "TMATMUL_ACC(" in kernel
    caps = obligations(tmp_path / "pkg")
    assert ("Uses.Intrinsic(op=matmul,set=pto)", 14) in caps and ("Uses.Intrinsic(op=full,set=pto)", 12) in caps


def test_vendor_only_pto_ops_run_on_a2a3sim(ctx, tmp_path):
    pkg = compile_python(ctx, tmp_path, "pto_colsoftmax", ["colsoftmax"])
    x = f32(32, 256)
    r = htp.bind(pkg, ctx).run(cache_dir=tmp_path / "cache", run_dir=tmp_path / "run", X=x)
    e = np.exp(x - x.max(axis=0, keepdims=True))
    np.testing.assert_allclose(r["Y"], e / e.sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-6)
    kernel = next((tmp_path / "pkg" / "codegen" / "pto" / "kernels" / "aiv").glob("*.cpp")).read_text()
    for instr in ("TCOLMAX(", "TCOLEXPANDSUB(", "TEXP(", "TCOLSUM(", "TRECIP(", "TCOLEXPANDMUL("):
        assert instr in kernel, instr


def test_pto_ops_lower_with_their_set(tmp_path):
    pkg = tmp_path / "pkg"
    r = host("compile", str(PROGRAMS / "pto_colsoftmax.py"), "--target", "pto-a2a3sim", "-o", str(pkg),
             "--dump-ir", "all")
    assert r.returncode == 0, r.stderr
    (lowered,) = pkg.glob("ir/*_tile.lower.ast.json")
    body = json.loads(lowered.read_text())["attrs"]["tile.kernels"]["kernels"][0]["body"]
    assert [(op["op"], op.get("set")) for op in body] == [
        ("load", "pto"), ("colmax", "pto"), ("colexpand_sub", "pto"), ("exp", "pto"), ("colsum", "pto"),
        ("recip", "pto"), ("colexpand_mul", "pto"), ("store", "pto")]


# ---------------------------------------------------------------------------------------------- aie-sim

def test_aie_add_runs_on_aie_sim(tmp_path):
    a, b = f32(64, 64), f32(64, 64)
    pkg = compile_cli(tmp_path, "aie_vadd.py", "aie-npu1")
    assert ("Uses.Intrinsic(op=add,set=aie)", 11) in obligations(pkg)
    design = pkg / "codegen" / "aie" / "vadd"
    assert (design / "aie.mlir").read_text().count("aie.core(") == 4  # the grid's 4 cores
    assert "(double)l__t0[r * 64 + c] + (double)l__t1[r * 64 + c]" in (design / "kernels" / "vadd.cc").read_text()
    out = run_cli(tmp_path, pkg, A=a, B=b)
    np.testing.assert_array_equal(out["C"], a + b)


def test_vendor_only_aie_ops_run_on_aie_sim(tmp_path):
    x = f32(16, 64)
    pkg = compile_cli(tmp_path, "aie_colnorm.py", "aie-npu1")
    out = run_cli(tmp_path, pkg, x=x)
    want = (x - x.max(axis=0, keepdims=True)) * (1.0 / np.abs(x).sum(axis=0, keepdims=True))
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------- wrong target: resolver

def test_pto_exp_for_aie_npu1_is_a_resolver_error(tmp_path):
    r = host("compile", str(PROGRAMS / "pto_exp_on_aie.py"), "--target", "aie-npu1", "-o", str(tmp_path / "pkg"))
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"{PROGRAMS / 'pto_exp_on_aie.py'}:8:14: error: Uses.Intrinsic(op=exp,set=pto) is not accepted by target "
        "aie-npu1 — no selected component accepts Uses.Intrinsic(op=exp,set=pto); pto.backend accepts it for "
        "pto-a2a3sim, pto-a2a3 [resolve.unaccepted]"]
    assert not (tmp_path / "pkg").exists()


def test_aie_add_for_pto_a2a3sim_is_a_resolver_error(tmp_path):
    r = host("compile", str(PROGRAMS / "aie_add_on_pto.py"), "--target", "pto-a2a3sim", "-o", str(tmp_path / "pkg"))
    assert r.returncode == 1
    (line,) = r.stderr.splitlines()
    # the AIE targets (the device list is backend-aie's data) follow "accepts it for"
    assert line.startswith(
        f"{PROGRAMS / 'aie_add_on_pto.py'}:8:14: error: Uses.Intrinsic(op=add,set=aie) is not accepted by target "
        "pto-a2a3sim — no selected component accepts Uses.Intrinsic(op=add,set=aie); aie.backend accepts it for "
        "aie-npu1, "), line
    assert line.endswith(", aie-npu2 [resolve.unaccepted]") or ", aie-npu2, " in line, line
    assert line.endswith(" [resolve.unaccepted]")


def test_an_unknown_op_of_a_known_set_names_the_sets_ops(tmp_path):
    prog = tmp_path / "typo.py"
    prog.write_text((PROGRAMS / "pto_exp_on_aie.py").read_text().replace("pto.exp(", "pto.expp("))
    r = host("compile", str(prog), "--target", "pto-a2a3sim", "-o", str(tmp_path / "pkg"))
    assert r.returncode == 1
    first, note = r.stderr.splitlines()[:2]
    assert first == (f"{prog}:8:14: error: Uses.Intrinsic(op=expp,set=pto) needs intrinsic-set 'pto' with op 'expp', "
                     "which is not loaded [resolve.unmet]")
    assert note.startswith("  note: nearly: intrinsic-set 'pto.intrinsics' (plugin 'backend-pto' 0.1.0) has no op "
                           "'expp' (it has: load, store, alloc, full, copy, add, ")


# ------------------------------------------------------------------------------------------ Python surface

@pytest.mark.parametrize("plugin,op_set,vendor_only", [("backend-pto", "pto", "colexpand"), ("backend-aie", "aie", "colexpand")])
def test_the_owning_plugin_ships_typed_stubs_and_the_module_is_importable(tmp_path, plugin, op_set, vendor_only):
    stub = PLUGIN_DIR / f"htp-{plugin}.stubs" / "intrinsics" / f"{op_set}.pyi"
    text = stub.read_text()
    compile(text, stub.name, "exec")
    assert f"def {vendor_only}(s: Tile, rows: int | tuple[int, int]) -> Tile: ..." in text
    assert "def matmul(a: Tile, b: Tile, acc: Tile | None = ...) -> Tile: ..." in text
    module = importlib.import_module(f"htp.intrinsics.{op_set}")
    assert {"add", "exp", "matmul", vendor_only} <= set(dir(module))
    with pytest.raises(AttributeError, match=f"intrinsic set '{op_set}' \\(plugin '{plugin}'\\) declares no 'nope'"):
        getattr(module, "nope")
    # every op the stub declares is an op of the registered set, and the other way round
    declared = {line.split("(")[0][4:] for line in text.splitlines() if line.startswith("def ")}
    assert declared == {n for n in dir(module) if not n.startswith("_")}


def test_stubgen_installs_the_shipped_set_stubs(tmp_path):
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "htp.stubgen", "--out", str(tmp_path), "--plugins", str(PLUGIN_DIR)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for plugin, op_set in (("backend-pto", "pto"), ("backend-aie", "aie")):
        text = (tmp_path / "intrinsics" / f"{op_set}.pyi").read_text()
        assert text.startswith(f"# Shipped by plugin '{plugin}' for intrinsic set '{op_set}'"), text[:200]
        assert "_Any" not in text  # the shipped stub declares every op of the set
