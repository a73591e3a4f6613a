"""htp.islands.mlir: tile kernels (tile.kernels) lowered through MLIR 19 to native code, run against NumPy.

    PYTHONPATH=build/python:host/python /usr/bin/python3 -m pytest tests/python/test_mlir_lowering.py -q

The kernels come from compiling the examples (softmax, vector_add, rmsnorm, gemm) and two kernels written
here for the ops and control flow the examples do not use, their ``tile.kernels`` read from the
``tile.lower`` IR dump, plus one document written by hand (integer and 16-bit tiles, aliasing). The
module under test is imported from its source file, so the test does not depend on the build tree having
copied it. Tests that run the LLVM tools are skipped when mlir-opt 19 is absent."""
from __future__ import annotations

import copy
import importlib
import importlib.util
import json
import pathlib
import re
import sys

import numpy as np
import pytest

import htp

ROOT = pathlib.Path(__file__).resolve().parents[2]
MLIR_OPT = pathlib.Path("/usr/lib/llvm-19/bin/mlir-opt")
TARGET = "pto-a2a3sim"


def _load_module():
    path = ROOT / "host" / "python" / "htp" / "islands" / "mlir.py"
    spec = importlib.util.spec_from_file_location("htp_islands_mlir_under_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


mlir = _load_module()

needs_mlir = pytest.mark.skipif(not MLIR_OPT.exists(),
                                reason=f"{MLIR_OPT} is absent (Debian package mlir-19-tools)")

# Kernels exercising what the examples do not: column ops, sigmoid/tanh, transpose, casts (f16 -> f32,
# f32 -> i32), a 1-D view, a runtime loop bound, a negative step, if/else, scalar registers, rank-3 and
# dynamic views, scalar select/abs/max, InOut.
EXTRA_KERNELS = '''
from htp.dialects.tile import *


@kernel
def mixed(x: In[Tensor[8, 16, f32]], w: In[Tensor[16, f16]], y: Out[Tensor[8, 16, f32]],
          s: Out[Tensor[1, 16, f32]], q: Out[Tensor[8, 16, i32]], n: Scalar[i32]):
    t = load(x)
    u = sigmoid(colexpand_sub(t, colmax(t)))
    acc = full((8, 16), 1.0)
    for i in range(n):
        acc = add(acc, muls(u, i % 3))
    back = transpose(transpose(tanh(acc)))
    store(y, rowexpand_max(back, rowmin(t)))
    store(s, colsum(cast(load(w), f32)))
    store(q, cast(muls(t, 4.0), i32))


@kernel
def control(x: In[Tensor[4, 8, 16, f32]], y: InOut[Tensor[8, 16, f32]], n: Scalar[i32]):
    acc: Tile[8, 16, f32] = full((8, 16), 0.0)
    s = 0
    for b in range(3, -1, -1):
        if b % 2 == 0:
            acc = add(acc, load(x[b, :, :]))
        else:
            acc = subs(acc, b)
        s += b
    for i in range(n):
        s = s + i // 2 - i % 3
        r = i % 8
        store(y[r:r + 1, :], adds(load(y[r:r + 1, :]), max(s, -i) if i > 2 else abs(-i - 1)))
    store(y, add(load(y), acc))


@kernel
def casts_and_floors(x: In[Tensor[2, 8, f32]], a: In[Tensor[2, 8, i32]], b: In[Tensor[2, 8, i32]],
                     q: Out[Tensor[2, 8, i32]], q8: Out[Tensor[2, 8, i8]], d: Out[Tensor[2, 8, i32]],
                     d3: Out[Tensor[2, 8, i32]]):
    t = load(x)
    store(q, cast(t, i32))
    store(q8, cast(t, i8))
    store(d, div(load(a), load(b)))
    store(d3, divs(load(a), 3))
'''


def _tile_kernels(pkg: htp.Package) -> dict:
    [dump] = sorted((pkg.path / "ir").glob("*_tile.lower.ast.json"))
    return json.loads(dump.read_text())["attrs"]["tile.kernels"]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory) -> dict:
    """Every kernel of the examples and of EXTRA_KERNELS by name, from their tile.kernels."""
    out_dir = tmp_path_factory.mktemp("packages")
    sources = tmp_path_factory.mktemp("sources")
    (sources / "extra_kernels.py").write_text(EXTRA_KERNELS)
    sys.path[:0] = [str(ROOT / "examples"), str(sources)]
    try:
        entries = {name: getattr(importlib.import_module(name), name)
                   for name in ("softmax", "vector_add", "rmsnorm", "gemm")}
        extra = importlib.import_module("extra_kernels")
        entries.update(mixed=extra.mixed, control=extra.control, casts_and_floors=extra.casts_and_floors)
        ctx = htp.Context()
        found = {}
        for name, entry in entries.items():
            # (integer division is not lowered on pto: the kernel dividing integers goes through aie)
            target = "aie-npu1" if name == "casts_and_floors" else TARGET
            pkg = ctx.compile(entry, target, out_dir / name, dump_ir="all", force=True)
            for k in _tile_kernels(pkg)["kernels"]:
                found[k["name"]] = k
        return found
    finally:
        del sys.path[:2]


def _build(kernel: dict, workdir: pathlib.Path):
    return mlir.NativeKernel(mlir.lower_and_build(kernel, workdir), kernel)


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# kernel -> (reference(inputs) -> outputs, atol); rtol is 1e-5 throughout, against float64 references.
EXAMPLES = {
    "softmax_rows": (lambda x: {"y": _softmax(x)}, 1e-7),
    "add_tile": (lambda x, y: {"z": x + y}, 0.0),
    "rmsnorm_rows": (lambda x, g: {"y": x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-6) * g}, 1e-6),
    "gemm_tile": (lambda a, b: {"c": a @ b}, 1e-5),
}


@needs_mlir
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_kernel_runs_natively(kernels, tmp_path, name):
    k = kernels[name]
    native = _build(k, tmp_path)
    rng = np.random.default_rng(7)
    inputs = {p["name"]: rng.standard_normal(p["local_shape"]).astype(np.float32)
              for p in k["params"] if p["dir"] == "in"}
    reference, atol = EXAMPLES[name]
    expected = reference(**{n: a.astype(np.float64) for n, a in inputs.items()})
    got = native(**inputs)
    assert sorted(got) == sorted(expected)
    for out, want in expected.items():
        assert got[out].dtype == np.float32
        np.testing.assert_allclose(got[out], want, rtol=1e-5, atol=atol, err_msg=f"{name}: {out}")
    assert (tmp_path / "input.mlir").is_file() and (tmp_path / "lowered.mlir").is_file()
    assert "llvm.func @" + name in (tmp_path / "lowered.mlir").read_text()


@needs_mlir
def test_column_ops_casts_and_transcendentals(kernels, tmp_path):
    native = _build(kernels["mixed"], tmp_path)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float16)
    n = 5
    got = native(x=x, w=w, n=n)
    t = x.astype(np.float64)
    u = 1 / (1 + np.exp(-(t - t.max(axis=0, keepdims=True))))
    acc = np.ones((8, 16)) + sum(u * (i % 3) for i in range(n))
    np.testing.assert_allclose(got["y"], np.maximum(np.tanh(acc), t.min(axis=1, keepdims=True)), rtol=1e-5)
    np.testing.assert_array_equal(got["s"], w.astype(np.float32)[None, :])
    np.testing.assert_array_equal(got["q"], (x * np.float32(4.0)).astype(np.int32))  # truncated, as astype


# docs/dialects/tile.md: cast truncates toward zero as NumPy's astype does on x86 (a value the integer cannot
# hold, or NaN, INT32_MIN narrowed), and integer div floors as //. The island rounded to nearest even and
# truncated the quotient, disagreeing with NumPy and both simulators.
@needs_mlir
def test_casts_truncate_and_integer_division_floors_as_numpy(kernels, tmp_path):
    native = _build(kernels["casts_and_floors"], tmp_path)
    x = np.array([[0.7, 1.5, -0.7, -1.5, 3.5, 300.7, 2.5, -2.5],
                  [1e10, -1e10, np.nan, np.inf, -np.inf, 127.9, 128.5, -129.5]], np.float32)
    a = np.array([[-7, 7, 7, -7, 0, 9, -9, 1], [-1, 5, -5, 2**31 - 1, -2**31 + 1, 3, -3, 0]], np.int32)
    b = np.array([[2, -2, 2, -2, 5, 4, 4, -3], [3, -3, 3, 7, 7, -2, -2, 5]], np.int32)
    with np.errstate(invalid="ignore"):
        want_q, want_q8 = x.astype(np.int32), x.astype(np.int8)
    got = native(x=x, a=a, b=b)
    np.testing.assert_array_equal(got["q"], want_q)
    np.testing.assert_array_equal(got["q8"], want_q8)
    np.testing.assert_array_equal(got["d"], a // b)
    np.testing.assert_array_equal(got["d3"], a // 3)


@needs_mlir
def test_control_flow_scalars_and_views(kernels, tmp_path):
    native = _build(kernels["control"], tmp_path)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 8, 16)).astype(np.float32)
    y0 = rng.standard_normal((8, 16)).astype(np.float32)
    n = 13
    y = y0.copy()
    assert native(x=x, y=y, n=n)["y"] is y  # InOut: written in place
    acc, s = np.zeros((8, 16), np.float32), 0
    for b in range(3, -1, -1):
        acc = acc + x[b] if b % 2 == 0 else acc - np.float32(b)
        s += b
    want = y0.copy()
    for i in range(n):
        s = s + i // 2 - i % 3
        want[i % 8] += np.float32(max(s, -i) if i > 2 else abs(-i - 1))
    np.testing.assert_allclose(y, want + acc, rtol=1e-5)


def _tensor(name, shape, dtype, direction="in"):
    return {"name": name, "dir": direction, "type": {"kind": "tensor", "shape": shape, "dtype": dtype}}


def _op(op, dst, *args, **keys):
    return {"op": op, "dst": dst, "args": list(args), **keys}


def _load(tile, tensor):
    return {"op": "load", "dst": tile, "src": tensor, "offset": [0, 0]}


def _store(tensor, tile):
    return {"op": "store", "dst": tensor, "value": tile, "offset": [0, 0]}


# A document written by hand for what dialect-tile does not produce from the examples: i8 and 16-bit float
# tiles, unsigned arithmetic, ops whose result aliases an operand, vendor-set ops, a scalar read from a
# tensor, a constexpr and a select whose untaken operand would divide by zero.
HANDWRITTEN = {
    "name": "hand", "kind": "kernel", "mapping": None,
    "span": {"file": "hand.py", "line": 1, "col": 0, "end_line": 9, "end_col": 0},
    "params": [_tensor("a", [4, 8], "i8"), _tensor("b", [8, 4], "i8"), _tensor("c", [4, 4], "i32", "out"),
               _tensor("h", [4, 8], "f16"), _tensor("hb", [4, 8], "bf16"),
               _tensor("hout", [4, 8], "bf16", "out"),
               _tensor("u", [4, 8], "u8"), _tensor("uout", [4, 8], "u8", "out"),
               _tensor("sq", [4, 4], "f32"), _tensor("sqout", [4, 4], "f32", "out"),
               _tensor("rs", [4, 1], "f32", "out"), _tensor("idx", [3], "i32"),
               {"name": "d", "dir": "in", "type": {"kind": "scalar", "dtype": "i64"}},
               {"name": "K", "dir": "in", "type": {"kind": "constexpr", "value": 3}}],
    "locals": [{"name": n, "kind": "tile", "shape": shape, "dtype": dtype} for n, shape, dtype in [
        ("A", [4, 8], "i8"), ("B", [8, 4], "i8"), ("C", [4, 4], "i32"), ("H", [4, 8], "f16"),
        ("HB", [4, 8], "bf16"), ("HB2", [4, 8], "bf16"), ("U", [4, 8], "u8"), ("S", [4, 4], "f32"),
        ("R", [4, 1], "f32")]],
    "body": [
        _load("A", "a"), _load("B", "b"), _op("matmul", "C", "A", "B", accumulate=False), _store("c", "C"),
        _load("H", "h"), _load("HB", "hb"), _op("cast", "HB2", "H"), _op("add", "HB2", "HB2", "HB"),
        _op("sqrt", "HB2", "HB2", set="aie"), _store("hout", "HB2"),
        _load("U", "u"), _op("maxs", "U", "U", scalar=200), _op("divs", "U", "U", scalar=3),
        _store("uout", "U"),
        _load("S", "sq"), _op("matmul", "S", "S", "S", accumulate=True), _op("transpose", "S", "S"),
        _op("recip", "S", "S", set="pto"), _store("sqout", "S"),
        _op("rowsum", "R", "S"), _op("rowmax", "R", "R"),
        _op("adds", "R", "R", scalar={"op": "add", "args": [
            {"op": "select", "args": [{"op": "ne", "args": [{"param": "d"}, 0]},
                                      {"op": "floordiv", "args": [-7, {"param": "d"}]}, 0.5]},
            {"read": "idx", "index": [{"op": "sub", "args": [{"param": "K"}, 1]}]}]}),
        _store("rs", "R")],
}


def _to_bf16(x):
    """float32 -> bf16 words, rounded to nearest even."""
    u = x.astype(np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _from_bf16(words):
    return (words.astype(np.uint32) << 16).view(np.float32)


@needs_mlir
@pytest.mark.parametrize("d", [0, 2])
def test_integer_16_bit_and_aliasing_paths(tmp_path, d):
    native = _build(HANDWRITTEN, tmp_path)
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-128, 128, shape, dtype=np.int8) for shape in [(4, 8), (8, 4)])
    h = rng.standard_normal((4, 8)).astype(np.float16)
    hb = _to_bf16(rng.standard_normal((4, 8)).astype(np.float32) + 8)
    u = rng.integers(0, 256, (4, 8), dtype=np.uint8)
    sq = rng.standard_normal((4, 4)).astype(np.float32)
    idx = np.array([10, 20, 30], np.int32)
    got = native(a=a, b=b, h=h, hb=hb, u=u, sq=sq, idx=idx, d=d)

    np.testing.assert_array_equal(got["c"], a.astype(np.int32) @ b.astype(np.int32))
    # bf16 = f16 -> bf16, then add and sqrt computed in f32, each result rounded to bf16
    total = _to_bf16(_from_bf16(_to_bf16(h.astype(np.float32))) + _from_bf16(hb))
    np.testing.assert_array_equal(got["hout"], _to_bf16(np.sqrt(_from_bf16(total))))
    np.testing.assert_array_equal(got["uout"], np.maximum(u, 200) // 3)
    s = 1 / (sq.astype(np.float64) + sq.astype(np.float64) @ sq).T
    np.testing.assert_allclose(got["sqout"], s, rtol=1e-5)
    np.testing.assert_allclose(got["rs"], s.sum(axis=1, keepdims=True) + ((-7 // d) if d else 0.5) + 30,
                               rtol=1e-5)


def test_mlir_carries_source_locations(kernels):
    text = mlir.kernel_to_mlir(kernels["softmax_rows"])
    assert "func.func @softmax_rows(%x: memref<16x128xf32>, %y: memref<16x128xf32>)" in text
    assert 'loc("softmax.py":20:13)' in text  # rowexpand_sub: line 20, 0-based column 12
    # Every op (a region's op at its closing brace) ends with a location; region openings and block
    # labels carry none.
    body = [ln.strip() for ln in text.splitlines()[3:-2]]
    ops = [ln for ln in body if not ln.endswith("{") and not ln.startswith("^bb")]
    assert len(ops) > 20 and all(re.search(r' loc\("softmax\.py":\d+:\d+\)$', ln) for ln in ops)
    assert mlir.kernel_to_mlir(kernels["add_tile"], func_name="vadd").count("func.func @vadd(") == 1


def test_unsupported_ops_raise(kernels):
    k = copy.deepcopy(kernels["add_tile"])
    k["body"].insert(3, {"op": "csp.send", "args": ["_t2"], "attrs": {"channel": "c1"}})
    with pytest.raises(mlir.UnsupportedOp, match=r"kernel 'add_tile': op 'csp\.send'") as info:
        mlir.kernel_to_mlir(k)
    assert (info.value.op_name, info.value.kernel_name) == ("csp.send", "add_tile")

    k = copy.deepcopy(kernels["softmax_rows"])
    k["body"][3]["set"] = "vx"  # exp of an intrinsic set this lowering does not know
    with pytest.raises(mlir.UnsupportedOp, match=r"op 'vx\.exp'"):
        mlir.kernel_to_mlir(k)


@needs_mlir
def test_bad_mlir_is_a_tool_error_at_the_source_line(kernels):
    text = mlir.kernel_to_mlir(kernels["add_tile"])
    assert text.count("arith.addf") == 1
    with pytest.raises(mlir.ToolError) as info:
        mlir.lower_mlir(text.replace("arith.addf", "arith.addi"))
    e = info.value
    assert e.returncode != 0 and pathlib.Path(e.argv[0]).name == "mlir-opt"
    assert "vector_add.py:18:14: error: 'arith.addi' op operand #0 must be" in e.stderr_tail
    assert e.stderr_tail in str(e)


def test_missing_tools_name_their_package(kernels, tmp_path, monkeypatch):
    monkeypatch.setenv("HTP_MLIR_BIN", "/nonexistent")
    with pytest.raises(mlir.ToolMissing, match="mlir-19-tools") as info:
        mlir.lower_and_build(kernels["add_tile"], tmp_path)
    assert info.value.tool == "mlir-opt" and "/nonexistent" in str(info.value)
    with pytest.raises(mlir.ToolMissing, match="llvm-19"):
        mlir.find_tool("llc")


@needs_mlir
def test_runner_and_argument_checks(kernels, tmp_path):
    calls = []

    def run(argv, input_text):
        calls.append(pathlib.Path(argv[0]).name)
        return mlir.run_subprocess(argv, input_text)

    k = kernels["add_tile"]
    native = mlir.NativeKernel(mlir.lower_and_build(k, tmp_path, run=run), k)
    assert calls == ["mlir-opt", "mlir-translate", "llc", "cc"]
    x = np.ones((32, 64), np.float32)
    assert np.array_equal(native(x=x, y=x)["z"], 2 * x)  # an omitted Out is allocated
    with pytest.raises(TypeError, match="argument 'y' is float64, parameter 'y' is f32"):
        native(x=x, y=x.astype(np.float64))
    with pytest.raises(ValueError, match="shape"):
        native(x=x, y=x[:16])
    with pytest.raises(ValueError, match="C-contiguous"):
        native(x=x, y=np.asfortranarray(x))
    with pytest.raises(TypeError, match="missing argument 'x'"):
        native(y=x)
