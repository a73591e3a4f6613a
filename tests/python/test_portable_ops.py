"""Portable tile ops that programs needed per target before: column broadcasts (colexpand, colexpand_<op>),
transpose and cast (which rounded a float to an integer on pto-a2a3sim and truncated it on aie-npu1), lowered by
both backends and run on both simulators against NumPy."""

import builtins
import os
import re
import subprocess
import traceback

import numpy as np
import pytest

import htp
from htp.dialects.tile import (In, Out, Scalar, Tensor, Tile, add, adds, bf16, cast, colexpand, colexpand_add,
                               colexpand_div, colexpand_max, colexpand_mul, colexpand_sub, div, exp, f16, f32, full,
                               i8, i16, i32, i64, kernel, load, log, matmul, mul, muls, neg, relu, rsqrt, sigmoid,
                               sqrt, store, sub, tanh, rowexpand_sub, rowmax, rowsum, transpose, colmax, rowmin, maxs,
                               mins)
from htp.dialects.tile import abs  # noqa: A004 (the tile op)
from htp.dialects.tile import max, min  # noqa: A004 (also Python's, for scalars)
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.wsp import DenseDyn, P, buffer, schedule, workload

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_matmuls_taking_another_matmuls_result": [
        ("kernel chaining matmuls (`matmul(matmul(a, b), w)`)", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_cube_and_vector_work_in_one_branch_run": [
        ("kernel mixing cube and vector work in one branch of an `if`", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_register_replaced_through_a_matmul_in_one_branch_keeps_its_value_on_the_other": [
        ("kernel replacing a register through a matmul in one branch of an `if`", t)
        for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_tile_on_both_sides_of_a_matmul_runs": [
        ("matmul of a tile by itself (`matmul(t, t)`)", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_register_name_reused_for_a_later_matmul_runs": [
        ("kernel reusing a register name for a later matmul's result", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_names_reused_and_nested_branches_around_matmuls_run": [
        ("kernel with nested `if`s mixing cube and vector work", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_matmuls_chained_in_one_branch_run": [
        ("kernel chaining matmuls in one branch of an `if`", t) for t in ("pto-a2a3sim", "aie-npu1")],
}


@kernel
def column_ops(x: In[Tensor[16, 32, f32]], b: In[Tensor[1, 32, f32]], z: Out[Tensor[16, 32, f32]]):
    t = load(x)
    s = load(b)
    u = colexpand_max(colexpand_div(colexpand_mul(colexpand_sub(colexpand_add(t, s), s), s), s), s)
    store(z, add(u, colexpand(s, 16)))


@workload
def columns(X: In[Tensor[64, 32, f32]], B: In[Tensor[1, 32, f32]], Z: Out[Tensor[64, 32, f32]]):
    for i in P(4):
        column_ops[i](X.tile(i, 0), B, Z.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_column_broadcasts_match_numpy(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile(columns, target=target, out=tmp_path / "pkg")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 32), dtype=np.float32)
    b = rng.standard_normal((1, 32), dtype=np.float32) + 3
    r = htp.bind(pkg, ctx).run(X=x, B=b, cache_dir=tmp_path / "cache")
    want = np.maximum((((x + b) - b) * b) / b, b) + b
    np.testing.assert_allclose(r["Z"], want, rtol=1e-6, atol=1e-6)
    # The report's outcome (docs/python.md) reads alike on both targets; aie's reports had no "ok".
    assert r.report["ok"] is True and r.report["schema"] == "htp.run.v1"


@kernel
def transpose_add(x: In[Tensor[16, 32, f32]], y: In[Tensor[32, 16, f32]], z: Out[Tensor[32, 16, f32]]):
    store(z, add(transpose(load(x)), load(y)))


@workload
def transposed(X: In[Tensor[64, 32, f32]], Y: In[Tensor[128, 16, f32]], Z: Out[Tensor[128, 16, f32]]):
    for i in P(4):
        transpose_add[i](X.tile(i, 0), Y.tile(i, 0), Z.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_transpose_matches_numpy(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile(transposed, target=target, out=tmp_path / "pkg")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((64, 32), dtype=np.float32)
    y = rng.standard_normal((128, 16), dtype=np.float32)
    r = htp.bind(pkg, ctx).run(X=x, Y=y, cache_dir=tmp_path / "cache")
    want = np.concatenate([x[16 * i:16 * i + 16].T for i in range(4)]) + y
    np.testing.assert_array_equal(r["Z"], want)
    if target == "pto-a2a3sim":  # the PTO-ISA instruction, with the scratch tile the device needs
        kernels = "".join(p.read_text() for p in (pkg.path / "codegen").rglob("*.cpp"))
        assert "TTRANS(" in kernels


def test_a_column_operand_of_the_wrong_shape_names_both_shapes(tmp_path):
    @kernel
    def wrong(x: In[Tensor[16, 32, f32]], b: In[Tensor[16, 1, f32]], z: Out[Tensor[16, 32, f32]]):
        store(z, colexpand_add(load(x), load(b)))

    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(wrong, target="pto-a2a3sim", out=tmp_path / "pkg")
    d = e.value.errors[0]
    assert d.code == "tile.shape-mismatch"
    assert "needs 's' of shape [1, 32]" in d.message and "Tile[16, 1, f32]" in d.message, d.message


@kernel
def casts(x: In[Tensor[32, 64, f32]], xi: Out[Tensor[32, 64, i32]], xh: Out[Tensor[32, 64, f16]],
          back: Out[Tensor[32, 64, f32]]):
    t = load(x)
    store(xi, cast(t, i32))
    store(xh, cast(t, f16))
    store(back, cast(cast(t, i32), f32))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_cast_truncates_to_integers_and_rounds_to_narrower_floats(tmp_path, target):
    # docs/dialects/tile.md: as NumPy's astype — toward zero for integers (2.7 -> 2, -2.7 -> -2), to nearest
    # even for f16.
    ctx = htp.Context()
    pkg = ctx.compile(casts, target=target, out=tmp_path / "pkg")
    x = (np.random.default_rng(10).standard_normal((32, 64)) * 10).astype(np.float32)
    x[0, :4] = [2.7, -2.7, 0.5, -1.5]
    r = htp.bind(pkg, ctx).run(x=x)
    np.testing.assert_array_equal(r["xi"], x.astype(np.int32))
    np.testing.assert_array_equal(r["xh"], x.astype(np.float16))
    np.testing.assert_array_equal(r["back"], x.astype(np.int32).astype(np.float32))


@kernel
def unary_ops(x: In[Tensor[16, 64, f32]], p: In[Tensor[16, 64, f32]],
              y_exp: Out[Tensor[16, 64, f32]], y_log: Out[Tensor[16, 64, f32]], y_sqrt: Out[Tensor[16, 64, f32]],
              y_rsqrt: Out[Tensor[16, 64, f32]], y_sig: Out[Tensor[16, 64, f32]], y_tanh: Out[Tensor[16, 64, f32]],
              y_abs: Out[Tensor[16, 64, f32]], y_neg: Out[Tensor[16, 64, f32]], y_relu: Out[Tensor[16, 64, f32]]):
    t = load(x)
    q = load(p)
    store(y_exp, exp(t))
    store(y_log, log(q))
    store(y_sqrt, sqrt(q))
    store(y_rsqrt, rsqrt(q))
    store(y_sig, sigmoid(t))
    store(y_tanh, tanh(t))
    store(y_abs, abs(t))
    store(y_neg, neg(t))
    store(y_relu, relu(t))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_every_unary_op_in_a_kernel_entry_with_nine_outputs(tmp_path, target):
    # Nine outputs need more shim channels than npu1 has (aie.route before): the entry runs as one
    # host-orchestrated task whose objects travel packed.
    ctx = htp.Context()
    pkg = ctx.compile(unary_ops, target=target, out=tmp_path / "pkg")
    rng = np.random.default_rng(12)
    x = rng.standard_normal((16, 64), dtype=np.float32)
    q = np.abs(rng.standard_normal((16, 64), dtype=np.float32)) + 0.1
    r = htp.bind(pkg, ctx).run(x=x, p=q)
    want = {"y_exp": np.exp(x), "y_log": np.log(q), "y_sqrt": np.sqrt(q), "y_rsqrt": 1 / np.sqrt(q),
            "y_sig": 1 / (1 + np.exp(-x)), "y_tanh": np.tanh(x), "y_abs": np.abs(x), "y_neg": -x,
            "y_relu": np.maximum(x, 0)}
    for name, value in want.items():
        np.testing.assert_allclose(r[name], value, rtol=2e-5, atol=1e-6, err_msg=name)


# Scalar expressions follow Python's semantics for their operand types (tile.md §2): a floating operand makes
# `%` and `//` floating and `min` / `max` keep a runtime f32 scalar's value. Both targets computed them as
# 64-bit integers: 7.25 % 2.0 was 1.0, alpha % 1.0 was 0, max(alpha, 0.25) was 0 on aie-npu1, and alpha // 0.5
# (the divisor truncated to 0) killed the process with SIGFPE / SIGILL.
@kernel
def float_scalars(x: In[Tensor[4, 8, f32]], alpha: Scalar[f32], n: Scalar[i32], y: Out[Tensor[4, 8, f32]]):
    t = load(x)
    y0 = adds(t, 7.25 % 2.0)
    y1 = adds(y0, alpha % 1.0)
    y2 = muls(y1, max(alpha, 0.25))
    y3 = adds(y2, alpha // 0.5)
    y4 = adds(y3, min(alpha, -0.5))
    store(y, adds(y4, n // 2 + n % 3))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_float_scalar_expressions_follow_python(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile(float_scalars, target=target, out=tmp_path / "pkg")
    x = np.random.default_rng(5).standard_normal((4, 8), dtype=np.float32)
    for alpha, n in ((1.75, 7), (-2.625, -7)):
        r = htp.bind(pkg, ctx).run(x=x, alpha=alpha, n=n, cache_dir=tmp_path / "cache")
        want = ((x + 7.25 % 2.0 + alpha % 1.0) * builtins.max(alpha, 0.25) + alpha // 0.5 + builtins.min(alpha, -0.5)
                + n // 2 + n % 3)
        np.testing.assert_allclose(r["y"], want.astype(np.float32), rtol=1e-6, atol=1e-6)


# Integer tiles compute as integers (tile.md §3): aie-npu1 computed every elementwise op in double, so an i32
# sum past 2^31 stored INT_MIN instead of wrapping, i64 values past 2^53 lost their low bits and an i32 `div`
# truncated where NumPy's // floors.
@kernel
def int_ops(a: In[Tensor[4, 8, i32]], b: In[Tensor[4, 8, i32]], c: In[Tensor[4, 8, i64]],
            s: Out[Tensor[4, 8, i32]], p: Out[Tensor[4, 8, i32]], w: Out[Tensor[4, 8, i64]]):
    x = load(a)
    y = load(b)
    store(s, add(x, y))
    store(p, mul(x, y))
    store(w, adds(load(c), 1))


@kernel
def int_div(a: In[Tensor[4, 8, i32]], b: In[Tensor[4, 8, i32]], q: Out[Tensor[4, 8, i32]]):
    store(q, div(load(a), load(b)))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_integer_tiles_wrap_and_floor_like_numpy(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(8)
    a = rng.integers(-2**31, 2**31, (4, 8), dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, (4, 8), dtype=np.int64).astype(np.int32)
    c = rng.integers(2**53, 2**62, (4, 8), dtype=np.int64) | 1
    r = htp.bind(ctx.compile(int_ops, target=target, out=tmp_path / "ops"), ctx).run(a=a, b=b, c=c)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(r["s"], a + b)
        np.testing.assert_array_equal(r["p"], a * b)
    np.testing.assert_array_equal(r["w"], c + 1)
    n = rng.integers(-50, 50, (4, 8), dtype=np.int32)
    d = rng.choice(np.array([-7, -3, -2, 2, 3, 7], np.int32), (4, 8))
    if target == "pto-a2a3sim":  # a2a3 divides floats only
        with pytest.raises(htp.CompileError, match="pto.contract"):
            ctx.compile(int_div, target=target, out=tmp_path / "div")
        return
    r = htp.bind(ctx.compile(int_div, target=target, out=tmp_path / "div"), ctx).run(a=n, b=d)
    np.testing.assert_array_equal(r["q"], n // d)


# Half-precision and float scalars at run time. pto-a2a3sim's orchestration declared an f16 / bf16 scalar with
# a type it does not have (`half`: the run failed to build); aie-npu1 read an f16 scalar of a packed task as 0
# and refused a float workload scalar passed to a kernel's Scalar[f16] or compared in a condition.
@kernel
def scale_shift(x: In[Tensor[2, 16, f16]], s: Scalar[f16], z: Scalar[f32], y: Out[Tensor[2, 16, f16]]):
    store(y, adds(muls(load(x), s), z))


@kernel
def scale_half(x: In[Tensor[16, 32, f16]], s: Scalar[f16], y: Out[Tensor[16, 32, f16]]):
    store(y, muls(load(x), s))


@kernel
def exp_of(x: In[Tensor[16, 32, f16]], y: Out[Tensor[16, 32, f16]]):
    store(y, exp(load(x)))


@workload
def scale_or_exp(X: In[Tensor[64, 32, f16]], alpha: float, Y: Out[Tensor[64, 32, f16]]):
    if alpha > 1.0:
        for i in P(4):
            scale_half[i](X.tile(i, 0), alpha, Y.tile(i, 0))
    else:
        for i in P(4):
            exp_of[i](X.tile(i, 0), Y.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_half_and_float_scalars_at_run_time(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 16)).astype(np.float16)
    r = htp.bind(ctx.compile(scale_shift, target=target, out=tmp_path / "ss"), ctx).run(x=x, s=1.5, z=0.25)
    np.testing.assert_allclose(r["y"].astype(np.float32), x.astype(np.float32) * 1.5 + 0.25, rtol=1e-2, atol=1e-2)
    X = rng.standard_normal((64, 32)).astype(np.float16)
    bound = htp.bind(ctx.compile(scale_or_exp, target=target, out=tmp_path / "w"), ctx)
    np.testing.assert_allclose(bound.run(X=X, alpha=1.75)["Y"].astype(np.float32), X.astype(np.float32) * 1.75,
                               rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(bound.run(X=X, alpha=0.5)["Y"].astype(np.float32), np.exp(X.astype(np.float32)),
                               rtol=1e-2, atol=1e-2)


# A NaN bf16 scalar stays NaN: aie-npu1 rounded the scalar's f32 into bf16 without the kernels' NaN rule, so a NaN
# whose float bits are all ones carried into the sign bit and arrived as +0.0 (y = x instead of NaN).
@kernel
def shift_bf16(x: In[Tensor[2, 16, bf16]], s: Scalar[bf16], y: Out[Tensor[2, 16, bf16]]):
    store(y, adds(load(x), s))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_nan_bf16_scalar_stays_nan(tmp_path, target):
    ctx = htp.Context()
    x = np.full((2, 16), 0x3F80, np.uint16)  # bf16 1.0, as 16-bit words
    bound = htp.bind(ctx.compile(shift_bf16, target=target, out=tmp_path / "p"), ctx)
    assert np.array_equal(bound.run(x=x, s=0.5)["y"], np.full((2, 16), 0x3FC0, np.uint16))  # 1.5
    nan = float(np.frombuffer(b"\xff" * 8, np.float64)[0])  # a NaN with every payload bit set
    y = bound.run(x=x, s=nan)["y"].view(np.uint16)
    assert np.all((y & 0x7F80) == 0x7F80) and np.all(y & 0x7F), [hex(v) for v in y.ravel()[:4]]


# A kernel's tile at an offset known only at run time (a loop to a runtime scalar) that leaves its tensor is a
# run error naming the line, on both simulators: pto-a2a3sim read and wrote past the tensor silently (garbage,
# NaN) and aie-npu1 returned garbage or killed the process (a store far past the tensor: SIGSEGV).
@kernel
def sum_blocks(x: In[Tensor[48, 16, f32]], n: Scalar[i32], y: Out[Tensor[8, 16, f32]]):
    acc = full((8, 16), 0.0)
    for i in range(n):
        acc = add(acc, load(x[i * 8:i * 8 + 8, :]))
    store(y, acc)


@kernel
def store_at(x: In[Tensor[8, 16, f32]], r: Scalar[i32], y: Out[Tensor[16, 16, f32]]):
    store(y[r:r + 8, :], load(x))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_tile_past_its_tensor_at_run_time_is_a_run_error(tmp_path, target):
    ctx = htp.Context()
    x = np.random.default_rng(10).standard_normal((48, 16)).astype(np.float32)
    bound = htp.bind(ctx.compile(sum_blocks, target=target, out=tmp_path / "sum"), ctx)
    np.testing.assert_allclose(bound.run(x=x, n=6)["y"], x.reshape(6, 8, 16).sum(0), rtol=1e-5, atol=1e-5)
    with pytest.raises(htp.RunError) as e:
        bound.run(x=x, n=7)
    line = [i for i, t in enumerate(open(__file__).read().splitlines(), 1)
                              if "acc = add(acc, load(x[i * 8:i * 8 + 8, :]))" in t][0]
    # (placed at the line: the error's span, and its text starts there)
    assert str(e.value).startswith(f"test_portable_ops.py:{line}:"), str(e.value)
    assert e.value.errors[0].span["line"] == line, str(e.value)
    assert ("runtime data: the tile of 'x' covers [48, 56) in dimension 0, outside its extent 48"
            in str(e.value)), str(e.value)
    bound = htp.bind(ctx.compile(store_at, target=target, out=tmp_path / "store"), ctx)
    np.testing.assert_array_equal(bound.run(x=x[:8], r=8)["y"][8:], x[:8])
    with pytest.raises(htp.RunError, match=r"the tile of 'y' covers \[4096, 4104\) in dimension 0, outside its extent 16"):
        bound.run(x=x[:8], r=4096)


@kernel
def copy_row(src: In[Tensor[1, 8, f32]], dst: Out[Tensor[1, 8, f32]]):
    store(dst, load(src))


@workload
def gather_rows(X: In[Tensor[4, 8, f32]], table: In[Tensor[4, i32]], n: int, Y: Out[Tensor[4, 8, f32]]):
    for i in P.seq(n):
        copy_row[i](X[table[i]:table[i] + 1, :], Y[i:i + 1, :])  # (the launch reading the table)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_run_error_of_runtime_data_is_placed_at_the_program_line(tmp_path, target):
    # A table index past its tensor: pto-a2a3sim named only the generated orchestration file, and on both targets
    # the location was text in the message, so the error had no span and its traceback ended inside htp.
    ctx = htp.Context()
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    bound = htp.bind(ctx.compile([copy_row, gather_rows], target=target, out=tmp_path / "p"), ctx)
    with pytest.raises(htp.RunError) as e:
        bound.run(X=x, table=np.array([3, 2, 1, 0], np.int32), n=5)
    line = [i for i, t in enumerate(open(__file__).read().splitlines(), 1) if "(the launch reading the table)" in t][0]
    assert e.value.errors[0].span["file"] == __file__ and e.value.errors[0].span["line"] == line, e.value.errors[0]
    assert "runtime data: index 4 of dimension 0 of 'table' is outside its extent 4" in e.value.errors[0].message
    assert "orchestration" not in str(e.value), str(e.value)
    last = traceback.extract_tb(e.value.__traceback__)[-1]
    assert (last.filename, last.lineno) == (__file__, line)


# A result assigned back to its operand: `t = transpose(t)` wrote the transpose over the tile it was reading on
# both targets (120 of 256 elements wrong), and `a = matmul(a, b)` did on aie-npu1 (pto-a2a3sim refused it). The
# result now goes to a register of its own, then to the name.
@kernel
def transposed_in_place(x: In[Tensor[16, 16, f32]], y: Out[Tensor[16, 16, f32]]):
    t = load(x)
    t = transpose(t)
    store(y, t)


@kernel
def product_in_place(x: In[Tensor[16, 16, f32]], w: In[Tensor[16, 16, f32]], y: Out[Tensor[16, 16, f32]]):
    a = load(x)
    a = matmul(a, load(w))
    store(y, a)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_result_assigned_back_to_its_operand(tmp_path, target):
    x = np.arange(256, dtype=np.float32).reshape(16, 16) / 64
    w = np.random.default_rng(24).standard_normal((16, 16)).astype(np.float32)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(transposed_in_place, target=target, out=tmp_path / "t"), ctx).run(x=x)
    np.testing.assert_array_equal(r["y"], x.T)
    r = htp.bind(ctx.compile(product_in_place, target=target, out=tmp_path / "m"), ctx).run(x=x, w=w)
    np.testing.assert_allclose(r["y"], x @ w, rtol=1e-5, atol=1e-5)


# `acc += matmul(acc, b)` (tile.md section 2: acc = acc + acc @ b) left acc as it was on both targets, silently: the
# product went to a register of its own (acc is an operand) and nothing copied it to acc.
@kernel
def accumulate_own_product(x: In[Tensor[16, 16, f32]], w: In[Tensor[16, 16, f32]], y: Out[Tensor[16, 16, f32]],
                           z: Out[Tensor[16, 16, f32]]):
    acc = load(x)
    acc += matmul(acc, load(w))
    store(y, acc)
    acc2 = load(w)
    acc2 += matmul(load(x), acc2)
    store(z, acc2)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_accumulator_that_is_an_operand_of_its_matmul(tmp_path, target):
    x = (np.random.default_rng(25).integers(-4, 5, (16, 16)) / 8).astype(np.float32)
    w = (np.random.default_rng(26).integers(-4, 5, (16, 16)) / 8).astype(np.float32)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(accumulate_own_product, target=target, out=tmp_path / "p"), ctx).run(x=x, w=w)
    np.testing.assert_allclose(r["y"], x + x @ w, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r["z"], w + x @ w, rtol=1e-6, atol=1e-6)


# An accumulator reset by full(..., 0.0) is zeroed lazily on pto (the next matmul overwrites it): stored before a
# matmul wrote it, pto-a2a3sim stored what the cube's L0C last held, silently: the previous task's product (the
# store before the first matmul), or the product before the reset. aie-npu1 stores zeros. pto then refused the
# store (pto.contract); where the reset is certain it now stores zeros from a fill of their own on the vector core,
# as aie-npu1 does, and where a loop's run-time trip count decides it, stops the run at the store.
@kernel
def store_before_matmul(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], z: Out[Tensor[32, 32, f32]],
                        c: Out[Tensor[32, 32, f32]]):
    acc = full((32, 32), 0.0, f32)
    store(z, acc)
    acc = matmul(load(a), load(b), acc)
    store(c, acc)


@kernel
def store_after_reset(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], c: Out[Tensor[32, 32, f32]],
                      z: Out[Tensor[32, 32, f32]]):
    acc = full((32, 32), 0.0, f32)
    acc = matmul(load(a), load(b), acc)
    store(c, acc)
    acc = full((32, 32), 0.0, f32)
    store(z, acc)


@kernel
def k_loop_of_n(a: In[Tensor[32, 128, f32]], b: In[Tensor[128, 32, f32]], c: Out[Tensor[32, 32, f32]],
                n: Scalar[i32]):
    acc = full((32, 32), 0.0, f32)
    for k in range(n):
        acc = matmul(load(a[:, k * 32:k * 32 + 32]), load(b[k * 32:k * 32 + 32, :]), acc)
    store(c, acc)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_accumulator_stored_before_a_matmul_writes_it(tmp_path, target):
    rng = np.random.default_rng(27)
    a, b = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    A, B = rng.standard_normal((32, 128)).astype(np.float32), rng.standard_normal((128, 32)).astype(np.float32)
    ctx = htp.Context()
    for fn in (store_before_matmul, store_after_reset):
        r = htp.bind(ctx.compile(fn, target=target, out=tmp_path / fn.__name__), ctx).run(a=a, b=b)
        np.testing.assert_array_equal(r["z"], np.zeros((32, 32), np.float32))
        np.testing.assert_allclose(r["c"], a @ b, rtol=1e-5, atol=1e-5)
    run = htp.bind(ctx.compile(k_loop_of_n, target=target, out=tmp_path / "loop"), ctx)
    for n in (4, 1):
        np.testing.assert_allclose(run.run(a=A, b=B, n=n)["c"], A[:, :32 * n] @ B[:32 * n], rtol=1e-4, atol=1e-4)
    if target == "aie-npu1":
        np.testing.assert_array_equal(run.run(a=A, b=B, n=0)["c"], np.zeros((32, 32), np.float32))
    else:
        with pytest.raises(htp.RunError, match=r"accumulator 'acc' is stored with no matmul since its full\(\)"):
            run.run(a=A, b=B, n=0)


# An accumulator read, before a matmul wrote it, by anything but the matmul accumulating into it: a copy
# (`acc2 = acc`, or `matmul(b, b, acc)` into another register), a vector op, or a store, while the kernel has a
# matmul elsewhere. pto-a2a3sim refused each one as a `pto.load` to L0C (there was none) at the kernel's def line,
# and a zero fill of a plain register in a kernel with a matmul as pto.core-type; aie-npu1 ran them. On pto the
# reader now reads a fill of its own on the vector core.
@kernel
def copy_of_reset(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], x: Out[Tensor[32, 32, f32]]):
    acc = full((32, 32), 0.0, f32)
    acc2 = acc
    acc = matmul(load(a), load(b), acc)
    acc2 = matmul(load(b), load(b), acc2)
    store(x, add(acc, acc2))


@kernel
def into_another(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], x: Out[Tensor[32, 32, f32]],
                 y: Out[Tensor[32, 32, f32]]):
    acc = full((32, 32), 0.0, f32)
    c2 = matmul(load(a), load(b), acc)
    acc = matmul(load(b), load(b), acc)
    store(x, c2)
    store(y, acc)


@kernel
def vector_op_on_reset(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], x: Out[Tensor[32, 32, f32]],
                       y: Out[Tensor[32, 32, f32]]):
    acc = full((32, 32), 1.0, f32)
    e = exp(muls(acc, 0.0))
    acc = full((32, 32), 0.0, f32)
    if True:
        t = add(load(a), acc)
    for i in range(2):
        acc = matmul(load(a), load(b), acc)
    store(x, add(e, acc))
    store(y, t)


@kernel
def zeros_beside_matmul(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], z: Out[Tensor[32, 32, f32]],
                        c: Out[Tensor[32, 32, f32]]):
    zero = full((32, 32), 0.0, f32)
    store(z, zero)
    acc = full((32, 32), 0.0, f32)
    acc = matmul(load(a), load(b), acc)
    store(c, acc)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_reset_accumulator_read_before_its_matmul(tmp_path, target):
    rng = np.random.default_rng(28)
    a, b = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    ctx = htp.Context()
    run = lambda fn: htp.bind(ctx.compile(fn, target=target, out=tmp_path / fn.__name__), ctx).run(a=a, b=b)
    close = lambda got, want: np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    close(run(copy_of_reset)["x"], a @ b + b @ b)
    r = run(into_another)
    close(r["x"], a @ b)
    close(r["y"], b @ b)
    r = run(vector_op_on_reset)
    close(r["x"], 1 + 2 * (a @ b))
    close(r["y"], a)
    r = run(zeros_beside_matmul)
    np.testing.assert_array_equal(r["z"], np.zeros((32, 32), np.float32))
    close(r["c"], a @ b)


# An accumulator started from another value than 0 (a bias): pto-a2a3sim refused it ("accumulator 'acc' can
# only be reset to 0 (the cube unit has no fill)", pto.contract); aie-npu1 ran it. It is now a fill on the vector
# core and an add after each matmul, as for an accumulator loaded from memory, in a K-loop too.
@kernel
def biased(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], c: Out[Tensor[32, 32, f32]]):
    acc = full((32, 32), 1.5, f32)
    acc = matmul(load(a), load(b), acc)
    store(c, acc)


@kernel
def biased_k_loop(a: In[Tensor[32, 128, f32]], b: In[Tensor[128, 32, f32]], c: Out[Tensor[32, 32, f32]]):
    acc = full((32, 32), -2.0, f32)
    for k in range(4):
        acc = matmul(load(a[:, k * 32:k * 32 + 32]), load(b[k * 32:k * 32 + 32, :]), acc)
    store(c, acc)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_accumulator_started_from_a_bias(tmp_path, target):
    rng = np.random.default_rng(29)
    a, b = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    A, B = rng.standard_normal((32, 128)).astype(np.float32), rng.standard_normal((128, 32)).astype(np.float32)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(biased, target=target, out=tmp_path / "one"), ctx).run(a=a, b=b)
    np.testing.assert_allclose(r["c"], a @ b + 1.5, rtol=1e-4, atol=1e-4)
    r = htp.bind(ctx.compile(biased_k_loop, target=target, out=tmp_path / "loop"), ctx).run(a=A, b=B)
    np.testing.assert_allclose(r["c"], A @ B - 2.0, rtol=1e-4, atol=1e-4)


# An integer division by a runtime zero (Python raises ZeroDivisionError) is a run error on both simulators, in a
# kernel's scalar expression and in a workload's extent: it was a SIGFPE (SIGILL on aie) that killed the process.
# The error is placed at the line that divides (in a kernel it named only the task and the core).
@kernel
def add_quotient(x: In[Tensor[1, 8, f32]], n: Scalar[i32], m: Scalar[i32], y: Out[Tensor[1, 8, f32]]):
    store(y, adds(load(x), n // m + n % m))


@kernel
def exp_rows(x: In[Tensor[8, 32, f32]], y: Out[Tensor[8, 32, f32]]):
    store(y, exp(load(x)))


@workload
def first_blocks(X: In[Tensor[64, 32, f32]], n: int, Y: Out[Tensor[64, 32, f32]]):
    for i in P(DenseDyn(8 // n)):
        exp_rows[i](X.tile(i, 0), Y.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_integer_division_by_a_runtime_zero_is_a_run_error(tmp_path, target):
    ctx = htp.Context()
    x = np.zeros((1, 8), np.float32)
    bound = htp.bind(ctx.compile(add_quotient, target=target, out=tmp_path / "k"), ctx)
    np.testing.assert_array_equal(bound.run(x=x, n=-7, m=2)["y"], x + (-7 // 2 + -7 % 2))
    with pytest.raises(htp.RunError, match="division by zero") as e:
        bound.run(x=x, n=7, m=0)
    line_of = lambda text: [i for i, t in enumerate(open(__file__).read().splitlines(), 1) if text in t][0]
    span = e.value.errors[0].span
    assert (span["file"].rsplit("/", 1)[-1], span["line"]) == ("test_portable_ops.py",
                                                              line_of("store(y, adds(load(x), n // m + n % m))"))
    X = np.zeros((64, 32), np.float32)
    bound = htp.bind(ctx.compile(first_blocks, target=target, out=tmp_path / "w"), ctx)
    np.testing.assert_array_equal(bound.run(X=X, n=2, Y=np.zeros_like(X))["Y"][:32], np.ones((32, 32), np.float32))
    with pytest.raises(htp.RunError, match="division by zero") as e:
        bound.run(X=X, n=0)
    span = e.value.errors[0].span
    assert (span["file"].rsplit("/", 1)[-1], span["line"]) == ("test_portable_ops.py",
                                                              line_of("for i in P(DenseDyn(8 // n)):"))


# range() with a negative step counts down, as Python's does (tile.md §2): both targets emitted `k < stop`, so
# range(3, -1, -1) ran zero times, and range(2, 5, -1) — empty in Python — never ended. A step known only at run
# time picks its direction at run time.
@kernel
def reversed_blocks(x: In[Tensor[32, 16, f32]], n: Scalar[i32], s: Scalar[i32], y: Out[Tensor[32, 16, f32]],
                    z: Out[Tensor[8, 16, f32]]):
    for k in range(3, -1, -1):
        store(y[(3 - k) * 8:(3 - k) * 8 + 8, :], load(x[k * 8:k * 8 + 8, :]))
    acc = full((8, 16), 0.0)
    for k in range(2, 5, -1):
        acc = add(acc, load(x[0:8, :]))
    for k in range(n, -1, s):
        acc = add(acc, muls(load(x[k * 8:k * 8 + 8, :]), 2.0))
    store(z, acc)


# A workload's float scalar through // and % (wsp.md §3): aie-npu1 refused it at run time ("a non-integer value").
@kernel
def fill_row(o: Out[Tensor[1, 8, f32]], v: Scalar[f32]):
    store(o, full((1, 8), v))


@workload
def float_args(O: Out[Tensor[2, 8, f32]], a: float):
    fill_row(O[0:1, :], a // 2.0)
    fill_row(O[1:2, :], a % 2.0)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_negative_steps_and_float_workload_scalars_follow_python(tmp_path, target):
    ctx = htp.Context()
    x = np.random.default_rng(12).standard_normal((32, 16)).astype(np.float32)
    with pytest.warns(htp.CompileWarning, match="runs zero times"):  # range(2, 5, -1)
        bound = htp.bind(ctx.compile(reversed_blocks, target=target, out=tmp_path / "k"), ctx)
    blocks = x.reshape(4, 8, 16)
    for n, s in ((3, -1), (2, -2), (1, 1)):
        r = bound.run(x=x, n=n, s=s)
        np.testing.assert_array_equal(r["y"], blocks[::-1].reshape(32, 16))
        want = sum((blocks[k] * 2.0 for k in range(n, -1, s)), np.zeros((8, 16), np.float32))
        np.testing.assert_allclose(r["z"], want, rtol=1e-6, atol=1e-6)
    bound = htp.bind(ctx.compile(float_args, target=target, out=tmp_path / "w"), ctx)
    for a in (3.5, -0.25):
        np.testing.assert_array_equal(bound.run(a=a)["O"][:, 0], np.array([a // 2.0, a % 2.0], np.float32))


# Arguments that ran but did something else (python.md, Running): an i32 scalar past 2**31 wrapped (2**64 raised
# pybind11's RuntimeError), and a read-only array given for an Out tensor was returned unwritten, its report
# saying "caller memory (zero-copy)".
@kernel
def shifted(x: In[Tensor[4, 8, f32]], n: Scalar[i32], y: Out[Tensor[4, 8, f32]]):
    store(y, adds(load(x), n))


def test_out_of_range_scalars_and_read_only_outputs_are_argument_errors(tmp_path):
    ctx = htp.Context()
    bound = htp.bind(ctx.compile(shifted, target="pto-a2a3sim", out=tmp_path / "pkg"), ctx)
    x = np.zeros((4, 8), np.float32)
    for n in (2**31, -2**31 - 1, 2**64):
        with pytest.raises(htp.ArgumentValueError, match=rf"argument 'n' is an i32 parameter; {n} is outside its range"):
            bound.run(x=x, n=n)
    np.testing.assert_array_equal(bound.run(x=x, n=2**31 - 1)["y"], x + np.float32(2**31 - 1))
    y = np.zeros((4, 8), np.float32)
    y.flags.writeable = False
    for out in (y, np.broadcast_to(np.float32(0), (4, 8))):
        with pytest.raises(htp.ArgumentValueError, match="argument 'y' is a read-only array, but 'y' is written"):
            bound.run(x=x, n=1, y=out)
    x.flags.writeable = False  # (a read-only input is fine: it is copied)
    np.testing.assert_array_equal(bound.run(x=x, n=1)["y"], np.ones((4, 8), np.float32))
    with pytest.raises(htp.ArgumentTypeError, match=r"argument 'n' is an integer parameter \(i32\), got 2.5"):
        bound.run(x=x, n=2.5)
    # (an int past 64 bits for a float parameter is that float, here one too large for f16)
    scaled = htp.bind(ctx.compile(scale_half, target="pto-a2a3sim", out=tmp_path / "f16"), ctx)
    with pytest.raises(htp.ArgumentValueError, match=r"'s' is an f16 parameter; 1e\+30 rounds to infinity"):
        scaled.run(x=np.ones((16, 32), np.float16), s=10**30)


# The same checks for `htp-host run -s`, which shares the runner with run(): -s n=2147483653 wrapped to
# -2147483643 and -s n=2.5 was truncated to 2, each running with a value the user did not give.
def test_cli_run_checks_integer_scalars_as_python_does(tmp_path):
    ctx = htp.Context()
    pkg = ctx.compile(shifted, target="pto-a2a3sim", out=tmp_path / "pkg").path
    np.save(tmp_path / "x.npy", np.zeros((4, 8), np.float32))

    def run(n):
        return subprocess.run([os.environ["HTP_HOST_EXE"], "run", os.fspath(pkg), "-i", f"x={tmp_path / 'x.npy'}",
                               "-s", f"n={n}", "-o", os.fspath(tmp_path / "out")],
                              capture_output=True, text=True, check=False)

    for n, code, text in ((2**31 + 5, "run.argument.range", f"an i32 parameter; {2**31 + 5} is outside its range "
                                                              "[-2147483648, 2147483647]"),
                          (-2**31 - 1, "run.argument.range", f"{-2**31 - 1} is outside its range"),
                          (2.5, "run.argument.dtype", "is an integer parameter (i32), got 2.5")):
        r = run(n)
        assert r.returncode != 0, r.stdout
        assert code in r.stderr and text in r.stderr, r.stderr
    ok = run(2**31 - 1)
    assert ok.returncode == 0, ok.stderr
    twice = subprocess.run([os.environ["HTP_HOST_EXE"], "run", os.fspath(pkg), "-i", f"x={tmp_path / 'x.npy'}",
                            "-s", "n=2", "-s", "n=5", "-o", os.fspath(tmp_path / "out2")],
                           capture_output=True, text=True, check=False)  # (the last one silently won)
    assert twice.returncode == 2 and "argument 'n' is given more than once" in twice.stderr, twice.stderr
    assert np.array_equal(np.load(tmp_path / "out" / "y.npy"), np.full((4, 8), np.float32(2**31 - 1)))


# A view whose offset a branch guards (`if i == 0: ... else: x.tile(i - 1, ...)`) is checked over the loop values
# that reach it: it was tile.view-out-of-bounds for row tile -1, which no iteration reads.
@kernel
def differences(x: In[Tensor[64, 16, f32]], y: Out[Tensor[64, 16, f32]]):
    for i in range(8):
        t = load(x.tile(i, 0, shape=(8, 16)))
        if i == 0:
            store(y.tile(i, 0, shape=(8, 16)), t)
        elif 0 < i and i <= 6:
            store(y.tile(i, 0, shape=(8, 16)), sub(t, load(x.tile(i - 1, 0, shape=(8, 16)))))
        else:
            store(y.tile(i, 0, shape=(8, 16)), sub(t, load(x.tile(i - 7, 0, shape=(8, 16)))))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_view_a_branch_guards_is_checked_over_the_values_reaching_it(tmp_path, target):
    ctx = htp.Context()
    x = np.random.default_rng(13).standard_normal((64, 16)).astype(np.float32)
    r = htp.bind(ctx.compile(differences, target=target, out=tmp_path / "pkg"), ctx).run(x=x)
    b = x.reshape(8, 8, 16)
    want = np.concatenate([b[:1], b[1:7] - b[:6], b[7:] - b[:1]]).reshape(64, 16)
    np.testing.assert_allclose(r["y"], want, rtol=1e-6, atol=1e-6)


# matmul(a, b, acc=c1) assigned to another name copies c1 first (tile.md §3): pto-a2a3sim refused it with an
# error about a load the program does not have (a2a3 cannot copy into L0C); it now adds a fresh product to the
# copy on the vector core.
@kernel
def two_products(x: In[Tensor[32, 32, f32]], w: In[Tensor[32, 32, f32]], o1: Out[Tensor[32, 32, f32]],
                 o2: Out[Tensor[32, 32, f32]]):
    c1 = matmul(load(x), load(w))
    c2 = matmul(load(x), load(w), acc=c1)
    store(o1, c1)
    store(o2, c2)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_matmul_accumulating_into_a_copy_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(14)
    x, w = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    r = htp.bind(ctx.compile(two_products, target=target, out=tmp_path / "pkg"), ctx).run(x=x, w=w)
    np.testing.assert_allclose(r["o1"], x @ w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r["o2"], 2 * (x @ w), rtol=1e-4, atol=1e-4)


# Scalars narrower than 32 bits on both targets: aie-npu1 refused them (aie.validate.transfer-size: "object of 2
# bytes is not a whole number of 32-bit words"); each now travels in a word of its own.
@kernel
def narrow_scalars(x: In[Tensor[2, 16, f16]], h: Scalar[f16], b: In[Tensor[2, 16, i16]], k: Scalar[i16],
                   c: In[Tensor[2, 32, i8]], j: Scalar[i8], y: Out[Tensor[2, 16, f16]], z: Out[Tensor[2, 16, i16]],
                   w: Out[Tensor[2, 32, i8]]):
    store(y, muls(load(x), h))
    store(z, adds(load(b), k))
    store(w, adds(load(c), j))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_scalars_narrower_than_a_word_run(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(15)
    x = rng.standard_normal((2, 16)).astype(np.float16)
    b = rng.integers(-1000, 1000, (2, 16)).astype(np.int16)
    c = rng.integers(-50, 50, (2, 32)).astype(np.int8)  # (pto: rows of 32 bytes)
    r = htp.bind(ctx.compile(narrow_scalars, target=target, out=tmp_path / "pkg"), ctx).run(
        x=x, h=-1.5, b=b, k=-300, c=c, j=7)
    np.testing.assert_allclose(r["y"].astype(np.float32), x.astype(np.float32) * -1.5, rtol=1e-2, atol=1e-2)
    np.testing.assert_array_equal(r["z"], b - 300)
    np.testing.assert_array_equal(r["w"], c + 7)


# Tensors whose objects are not whole 32-bit words (i8 [5, 7]: 35 bytes) were aie.validate.transfer-size errors on
# aie-npu1: such a kernel entry runs host-orchestrated there, its objects packed word-aligned. A 16-bit tensor whose
# f32 twin of the same bytes fitted a DMA pattern (f16 [33, 70]) was aie.dma-pattern: the fitter split its run at
# a step of half words; it maps spatially. pto-a2a3sim ran both.
@kernel
def odd_bytes(x: In[Tensor[5, 7, i8]], y: Out[Tensor[5, 7, i8]]):
    store(y, adds(load(x), 1))


@kernel
def wide_half_rows(x: In[Tensor[33, 70, f16]], y: Out[Tensor[33, 70, f16]]):
    store(y, adds(load(x), 1.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_objects_that_are_not_whole_words_run(tmp_path, target):
    ctx = htp.Context()
    x = np.arange(35, dtype=np.int8).reshape(5, 7)
    pkg = ctx.compile(odd_bytes, target=target, out=tmp_path / "a")
    np.testing.assert_array_equal(htp.bind(pkg, ctx).run(x=x)["y"], x + 1)
    h = np.random.default_rng(16).standard_normal((33, 70)).astype(np.float16)
    np.testing.assert_array_equal(htp.bind(ctx.compile(wide_half_rows, target=target, out=tmp_path / "b"), ctx).run(x=h)["y"],
                                  h + np.float16(1))
    if target == "aie-npu1":
        notes = [d["message"] for d in pkg.diagnostics if d["code"] == "aie.orchestrated"]
        assert any("object of 35 bytes is not a whole number of 32-bit words" in n for n in notes), notes
        wide = ctx.compile(wide_half_rows, target=target, out=tmp_path / "b", force=True)
        assert not [d for d in wide.diagnostics if d["code"] == "aie.orchestrated"], wide.diagnostics


def test_a_number_for_a_tensor_and_the_order_of_rendered_diagnostics(tmp_path):
    ctx = htp.Context()
    bound = htp.bind(ctx.compile(shifted, target="pto-a2a3sim", out=tmp_path / "pkg"), ctx)
    # (it said "missing input 'x'")
    with pytest.raises(htp.ArgumentTypeError, match=r"argument 'x' is a tensor parameter \(f32\[4, 8\]\), got the "
                                                    r"number 3.0: pass an array"):
        bound.run(x=3.0, n=1)
    # str(e) lists the errors first (python.md, Errors), the note that came first after them.
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(grid_too_big, target="aie-npu1", out=tmp_path / "aie")
    lines = str(e.value).splitlines()
    assert [d.severity for d in e.value.diagnostics] == ["note", "error"]
    assert ": error: " in lines[0] and ": note: " in lines[1], lines


@kernel
def max_scaled(x: In[Tensor[32, 128, f32]], y: In[Tensor[32, 128, f32]], z: Out[Tensor[32, 128, f32]]):
    store(z, sub(muls(max(load(x), load(y)), 3.0), load(y)))


@workload
def grid_too_big(A: In[Tensor[128, 256, f32]], B: In[Tensor[128, 256, f32]], C: Out[Tensor[128, 256, f32]]):
    for i, j in P(4, 2):
        max_scaled[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


# csp.md: a channel carries Tile[...] or Tensor[...] items. A Tensor[16, 32] channel failed on both targets with
# an internal error (tile.foreign: the receive's type was not a tile); a process computes on the item as the
# Tile[16, 32] it is.
@program
def tensor_items(X: In[Tensor[64, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
    ch = Channel[Tensor[16, 32, f32]](depth=2)

    @process(produces=[ch])
    def produce():
        for i in range(4):
            send(ch, exp(load(X.tile(i, 0, shape=(16, 32)))))

    @process(consumes=[ch])
    def collect():
        for i in range(4):
            store(Y.tile(i, 0, shape=(16, 32)), recv(ch))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_channel_of_tensor_items_runs(tmp_path, target):
    ctx = htp.Context()
    x = np.random.default_rng(16).standard_normal((64, 32)).astype(np.float32)
    r = htp.bind(ctx.compile(tensor_items, target=target, out=tmp_path / "pkg"), ctx).run(X=x)
    np.testing.assert_allclose(r["Y"], np.exp(x), rtol=1e-5, atol=1e-6)


# Tiles whose rows are narrower than pto's 32-byte vector block (an i8 tile of 16 columns, f16 of 8, f32 of 4) were
# pto.memory on pto-a2a3sim while aie-npu1 ran them: the tile is now padded to whole blocks, the instructions acting
# on its valid columns (reductions too).
@kernel
def narrow_rowsum(x: In[Tensor[16, 16, i8]], z: Out[Tensor[16, 1, i32]]):
    store(z, rowsum(cast(load(x), i32)))


@kernel
def narrow_transpose(x: In[Tensor[32, 16, i8]], z: Out[Tensor[16, 32, i8]]):
    store(z, transpose(load(x)))


@kernel
def narrow_softmax_shift(x: In[Tensor[16, 8, f16]], z: Out[Tensor[16, 8, f16]]):
    t = load(x)
    store(z, rowexpand_sub(t, rowmax(t)))


@kernel
def narrow_tiles(X: In[Tensor[64, 64, i8]], Z: Out[Tensor[64, 64, i8]]):
    for i in range(4):
        for j in range(4):
            store(Z.tile(i, j, shape=(16, 16)), adds(load(X.tile(i, j, shape=(16, 16))), 3))


@kernel
def narrow_exp_sum(x: In[Tensor[8, 4, f32]], z: Out[Tensor[8, 1, f32]]):
    store(z, rowsum(exp(load(x))))


_NARROW_RNG = np.random.default_rng(16)
NARROW = {
    "rowsum": (narrow_rowsum, {"x": _NARROW_RNG.integers(-100, 100, (16, 16)).astype(np.int8)},
               lambda x: {"z": x.astype(np.int32).sum(1, keepdims=True)}),
    "transpose": (narrow_transpose, {"x": _NARROW_RNG.integers(-100, 100, (32, 16)).astype(np.int8)},
                  lambda x: {"z": x.T}),
    "softmax_shift": (narrow_softmax_shift, {"x": _NARROW_RNG.standard_normal((16, 8)).astype(np.float16)},
                      lambda x: {"z": x - x.max(1, keepdims=True)}),
    "tiles": (narrow_tiles, {"X": _NARROW_RNG.integers(-100, 100, (64, 64)).astype(np.int8)},
              lambda X: {"Z": (X + 3).astype(np.int8)}),
    "exp_sum": (narrow_exp_sum, {"x": _NARROW_RNG.standard_normal((8, 4)).astype(np.float32)},
                lambda x: {"z": np.exp(x).sum(1, keepdims=True)}),
}


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
@pytest.mark.parametrize("case", sorted(NARROW))
def test_tiles_with_rows_narrower_than_a_vector_block(tmp_path, target, case):
    fn, args, reference = NARROW[case]
    ctx = htp.Context()
    r = htp.bind(ctx.compile(fn, target=target, out=tmp_path / "p"), ctx).run(**args)
    for name, want in reference(**args).items():
        if want.dtype.kind == "f":
            np.testing.assert_allclose(r[name].astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
        else:
            np.testing.assert_array_equal(r[name], want)


# A float cast to an integer it cannot hold gave different values per target: pto-a2a3sim what NumPy's astype gives
# (on x86), aie-npu1 the value wrapped through 64 bits (1e10 -> 1410065408 in an i32, -7168 in an i16).
@kernel
def casts_out_of_range(x: In[Tensor[1, 16, f32]], a: Out[Tensor[1, 16, i32]], b: Out[Tensor[1, 16, i16]],
                       c: Out[Tensor[1, 16, i8]], d: Out[Tensor[1, 16, i64]]):
    t = load(x)
    store(a, cast(t, i32))
    store(b, cast(t, i16))
    store(c, cast(t, i8))
    store(d, cast(t, i64))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_casts_of_floats_an_integer_cannot_hold_agree_with_numpy(tmp_path, target):
    x = np.array([[1e10, -1e10, 3e9, -3e9, 70000.5, -70000.5, 300.7, -300.7, 1e20, -1e20, np.inf, -np.inf, 2.5, -2.5,
                   2147483520.0, -2147483648.0]], np.float32)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(casts_out_of_range, target=target, out=tmp_path / "p"), ctx).run(x=x)
    with np.errstate(invalid="ignore"):
        for name, dtype in (("a", np.int32), ("b", np.int16), ("c", np.int8), ("d", np.int64)):
            np.testing.assert_array_equal(r[name], x.astype(dtype), err_msg=name)


# tanh of f16 / bf16 tiles on pto-a2a3sim composed 2 sigmoid(2x) - 1 in the tile's precision, which cancels near 0:
# bf16 tanh(0.0025) was 0, f16 off by 1%. It computes in f32 and rounds once, as aie-npu1 does.
@kernel
def tanh_half(x: In[Tensor[16, 32, f16]], y: In[Tensor[16, 32, bf16]], a: Out[Tensor[16, 32, f16]],
              b: Out[Tensor[16, 32, bf16]]):
    store(a, tanh(load(x)))
    store(b, tanh(load(y)))


def _bf16_words(v):
    bits = np.asarray(v, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def _from_bf16_words(w):
    return (w.astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_tanh_of_half_tiles_is_accurate_near_zero(tmp_path, target):
    v = (np.random.default_rng(40).standard_normal((16, 32)) * 0.02).astype(np.float32)
    v[0, :4] = [0.0025, -0.0019, 1e-3, 3.0]
    x, y = v.astype(np.float16), _bf16_words(v)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(tanh_half, target=target, out=tmp_path / "p"), ctx).run(x=x, y=y)
    np.testing.assert_allclose(r["a"].astype(np.float32), np.tanh(x.astype(np.float32)), rtol=2e-3, atol=1e-6)
    np.testing.assert_allclose(_from_bf16_words(r["b"].view(np.uint16)), np.tanh(_from_bf16_words(y)), rtol=1e-2,
                               atol=1e-6)


# sigmoid of f16 / bf16 tiles on pto-a2a3sim composed 1 / (1 + e^-x) in the tile's precision: e^-x overflowed f16
# below x = -11 (sigmoid(-12) was 0) and bf16 results were 1-2 ulp off (sigmoid(6) was 1). It computes in f32 and
# rounds once, as tanh does and aie-npu1 does.
@kernel
def sigmoid_half(x: In[Tensor[2, 16, f16]], y: In[Tensor[2, 16, bf16]], a: Out[Tensor[2, 16, f16]],
                 b: Out[Tensor[2, 16, bf16]]):
    store(a, sigmoid(load(x)))
    store(b, sigmoid(load(y)))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_sigmoid_of_half_tiles_is_rounded_once(tmp_path, target):
    v = np.linspace(-16, 12, 32, dtype=np.float32).reshape(2, 16)
    v[0, :4] = [-12.0, -16.0, 1.828125, 6.0]
    x, y = v.astype(np.float16), _bf16_words(v)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(sigmoid_half, target=target, out=tmp_path / "p"), ctx).run(x=x, y=y)

    def sig(t):
        return 1 / (1 + np.exp(-t.astype(np.float32)))
    np.testing.assert_allclose(r["a"].astype(np.float32), sig(x).astype(np.float16).astype(np.float32), rtol=1e-3)
    np.testing.assert_array_equal(r["b"].view(np.uint16), _bf16_words(sig(_from_bf16_words(y))))


# A float scalar meets a tile in the tile's dtype, as NumPy's `f16_array + 0.1` takes float16(0.1): aie-npu1 applied
# the double scalar and rounded once, so f16 -0.1 + 0.1 was 2.4e-05 there and 0 on pto-a2a3sim (and in NumPy).
@kernel
def scalar_ops(x: In[Tensor[1, 16, f16]], y: In[Tensor[1, 16, bf16]], z: In[Tensor[1, 16, f32]],
               a: Out[Tensor[1, 16, f16]], b: Out[Tensor[1, 16, bf16]], c: Out[Tensor[1, 16, f32]],
               m: Out[Tensor[1, 16, f16]]):
    store(a, adds(load(x), 0.1))
    store(b, adds(load(y), 0.1))
    store(c, adds(muls(load(z), 0.3), 0.1))
    store(m, muls(load(x), 0.3))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_float_scalar_is_taken_in_the_tiles_dtype(tmp_path, target):
    v = np.array([[-0.1, 0.3, 1.7, -2.5, 100.0, 0.05, -0.0999, 7.0] * 2], np.float32)
    x, y = v.astype(np.float16), _bf16_words(v)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(scalar_ops, target=target, out=tmp_path / "p"), ctx).run(x=x, y=y, z=v)
    np.testing.assert_array_equal(r["a"], x + 0.1)
    np.testing.assert_array_equal(r["m"], x * 0.3)
    tenth = _from_bf16_words(_bf16_words([0.1]))[0]
    np.testing.assert_array_equal(r["b"].view(np.uint16), _bf16_words(_from_bf16_words(y) + tenth))
    np.testing.assert_array_equal(r["c"], v * np.float32(0.3) + np.float32(0.1))


# max / min of float tiles, their scalar forms, relu and the max / min reductions give NaN when an operand is
# NaN, as NumPy's maximum / minimum / max / min do. Each simulator kept one operand of its own choosing:
# pto-a2a3sim max(NaN, 0) = 0 and max(1, NaN) = NaN, aie-npu1 the reverse; relu(NaN) was 0 on both.
def nan_max_min(dt):
    @kernel
    def max_min(x: In[Tensor[16, 64, dt]], z: In[Tensor[16, 64, dt]], hi: Out[Tensor[16, 64, dt]],
                lo: Out[Tensor[16, 64, dt]], r: Out[Tensor[16, 64, dt]], hs: Out[Tensor[16, 64, dt]],
                rmax: Out[Tensor[16, 1, dt]], rmin: Out[Tensor[16, 1, dt]], cmax: Out[Tensor[1, 64, dt]]):
        a = load(x)
        b = load(z)
        store(hi, max(a, b))
        store(lo, min(a, b))
        store(r, relu(a))
        store(hs, mins(maxs(a, -0.5), 0.5))
        store(rmax, rowmax(a))
        store(rmin, rowmin(a))
        store(cmax, colmax(a))
    return max_min


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_max_min_relu_and_reductions_propagate_nan_as_numpy(tmp_path, target, dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((16, 64)).astype(dtype)
    z = rng.standard_normal((16, 64)).astype(dtype)
    x[0, 0] = x[0, 2] = x[5, 9] = np.nan
    z[0, 1] = z[0, 2] = np.nan
    ctx = htp.Context()
    fn = nan_max_min(f32 if dtype == "float32" else f16)
    r = htp.bind(ctx.compile(fn, target=target, out=tmp_path / "p"), ctx).run(x=x, z=z)
    want = {"hi": np.maximum(x, z), "lo": np.minimum(x, z), "r": np.maximum(x, 0),
            "hs": np.minimum(np.maximum(x, -0.5), 0.5), "rmax": x.max(1, keepdims=True),
            "rmin": x.min(1, keepdims=True), "cmax": x.max(0, keepdims=True)}
    for name, w in want.items():
        np.testing.assert_array_equal(r[name], w, err_msg=name)


# Runs of one package into its default run directory (PKG/logs/run) at the same time: each replaced logs/run/
# under the other, and 8 to 12 of 75 runs failed ("cannot write .../logs/run/report.json"). They take turns now.
@kernel
def add_tiles(x: In[Tensor[16, 32, f32]], y: In[Tensor[16, 32, f32]], z: Out[Tensor[16, 32, f32]]):
    store(z, add(load(x), load(y)))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_concurrent_runs_of_one_package_all_succeed(tmp_path, target):
    import concurrent.futures
    ctx = htp.Context()
    pkg = ctx.compile(add_tiles, target=target, out=tmp_path / "p")
    x = np.ones((16, 32), np.float32)
    htp.bind(pkg, ctx).run(x=x, y=x)  # builds the kernels once

    def runs(seed):
        for i in range(8):
            y = np.full((16, 32), 10 * seed + i, np.float32)
            np.testing.assert_array_equal(htp.bind(pkg, ctx).run(x=x, y=y)["z"], x + y)

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        for f in [pool.submit(runs, s) for s in range(3)]:
            f.result()


# A float scalar on the command line could not be NaN or infinity (-s a=nan: "not a number"), and 1e40 for an
# f32 became inf silently; Python's run() took 1e40 as inf too. nan / inf / -inf are taken as Python spells
# them, and a finite number that rounds to infinity in the parameter's dtype is run.argument.range.
@kernel
def plus_scalar(x: In[Tensor[4, 8, f32]], s: Scalar[f32], y: Out[Tensor[4, 8, f32]]):
    store(y, adds(load(x), s))


def test_float_scalars_take_nan_and_inf_and_refuse_overflow(tmp_path):
    ctx = htp.Context()
    pkg = ctx.compile(plus_scalar, target="pto-a2a3sim", out=tmp_path / "pkg")
    np.save(tmp_path / "x.npy", np.zeros((4, 8), np.float32))

    def cli(value, out):
        return subprocess.run([os.environ["HTP_HOST_EXE"], "run", os.fspath(pkg.path), "-i", f"x={tmp_path / 'x.npy'}",
                               "-s", f"s={value}", "-o", os.fspath(tmp_path / out)],
                              capture_output=True, text=True, check=False)

    for value, want in (("nan", np.nan), ("inf", np.inf), ("-inf", -np.inf), ("3e38", np.float32(3e38))):
        r = cli(value, value)
        assert r.returncode == 0, r.stderr
        np.testing.assert_array_equal(np.load(tmp_path / value / "y.npy"), np.full((4, 8), want, np.float32))
    r = cli("1e40", "big")
    assert r.returncode == 1 and "run.argument.range" in r.stderr and "rounds to infinity" in r.stderr, r.stderr
    with pytest.raises(htp.RunError, match="rounds to infinity"):
        htp.bind(pkg, ctx).run(x=np.zeros((4, 8), np.float32), s=-1e40)
    # an int past 64 bits for a float parameter is that float
    np.testing.assert_array_equal(htp.bind(pkg, ctx).run(x=np.zeros((4, 8), np.float32), s=10**30)["y"],
                                  np.full((4, 8), np.float32(1e30)))


# A register stored to an output in one branch of an `if` while the other branch stores another value there, the
# register read again after the `if`: aie-npu1 made the register the output's memory (it is stored there), so the
# other branch's store overwrote it and the later read saw -x instead of x + 1, silently. An object written more
# than once is now no register's storage.
@kernel
def branch_stores(X: In[Tensor[32, 32, f32]], Y2: Out[Tensor[32, 32, f32]], Y3: Out[Tensor[32, 32, f32]],
                  flag: Scalar[i32]):
    x = load(X)
    b = adds(x, 1.0)
    if flag > 0:
        store(Y2, b)
    else:
        store(Y2, neg(x))
    store(Y3, b)


@kernel
def stored_then_overwritten(X: In[Tensor[32, 32, f32]], Y2: Out[Tensor[32, 32, f32]], Y3: Out[Tensor[32, 32, f32]],
                            flag: Scalar[i32]):
    x = load(X)
    b = adds(x, 1.0)
    store(Y2, b)
    if flag > 0:
        store(Y2, neg(x))
    store(Y3, b)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_register_stored_where_another_branch_stores(tmp_path, target):
    x = (np.arange(1024, dtype=np.float32).reshape(32, 32) % 17) - 8
    ctx = htp.Context()
    for fn in (branch_stores, stored_then_overwritten):
        bound = htp.bind(ctx.compile(fn, target=target, out=tmp_path / fn.__name__), ctx)
        for flag in (0, 1):
            r = bound.run(X=x, flag=flag)
            other = (flag > 0) != (fn is branch_stores)
            np.testing.assert_array_equal(r["Y2"], -x if other else x + 1, err_msg=f"{fn.__name__} flag={flag}")
            np.testing.assert_array_equal(r["Y3"], x + 1, err_msg=f"{fn.__name__} flag={flag}")


# A matmul taking another matmul's result as an operand, directly or through a cast (two f16 layers): pto-a2a3sim
# refused it ("used in two cube roles", or an internal-looking pto.memory-space plan/contract disagreement for the
# cast), aie-npu1 ran it. An a2a3 accumulator leaves the cube core only through global memory: the two matmuls are
# now parts of their own, the result handed over through a tensor (pto.md, mixed kernels).
@kernel
def chained(A: In[Tensor[16, 16, f32]], B: In[Tensor[16, 16, f32]], W: In[Tensor[16, 16, f32]],
            Y: Out[Tensor[16, 16, f32]], Z: Out[Tensor[16, 16, f32]]):
    m = matmul(load(A), load(B))
    store(Y, matmul(matmul(m, load(W)), m))
    store(Z, matmul(load(W), m))


@kernel
def two_f16_layers(A: In[Tensor[32, 16, f16]], B: In[Tensor[16, 16, f16]], W: In[Tensor[16, 16, f16]],
                   Y: Out[Tensor[32, 16, f32]]):
    b = load(B)
    w = load(W)
    for i in range(2):
        m = matmul(load(A.tile(i, 0, shape=(16, 16))), b)
        store(Y.tile(i, 0, shape=(16, 16)), matmul(cast(m, f16), w))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_matmuls_taking_another_matmuls_result(tmp_path, target):
    rng = np.random.default_rng(27)
    a, b, w = [(rng.integers(-4, 5, (16, 16)) / 8).astype(np.float32) for _ in range(3)]
    ctx = htp.Context()
    r = htp.bind(ctx.compile(chained, target=target, out=tmp_path / "c"), ctx).run(A=a, B=b, W=w)
    np.testing.assert_allclose(r["Y"], ((a @ b) @ w) @ (a @ b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["Z"], w @ (a @ b), rtol=1e-5, atol=1e-5)
    a2 = (rng.integers(-4, 5, (32, 16)) / 8).astype(np.float16)
    r = htp.bind(ctx.compile(two_f16_layers, target=target, out=tmp_path / "l"), ctx).run(
        A=a2, B=b.astype(np.float16), W=w.astype(np.float16))
    m = (a2.astype(np.float32).reshape(2, 16, 16) @ b).astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(r["Y"], (m @ w).reshape(32, 16), rtol=1e-3, atol=1e-3)


# Names HTP makes for pto-runtime longer than its 64 characters: a fused buffer's kernel
# `<producer>__<consumer>` of two 34-character kernels, a CSP process's `<program>_<process>`. pto-a2a3sim refused
# them (pto.unsupported "kernel name ... is longer than pto-runtime's 64 characters", a name the user never
# wrote); the runtime now knows such a kernel by its first 55 characters, '_' and a hash.
@kernel
def produce_the_intermediate_tile_abcd(x: In[Tensor[8, 16, f32]], t: Out[Tensor[8, 16, f32]]):
    store(t, adds(load(x), 1.0))


@kernel
def consume_the_intermediate_tile_abcd(t: In[Tensor[8, 16, f32]], y: Out[Tensor[8, 16, f32]]):
    store(y, adds(load(t), 2.0))


@workload
def fused_long_names(X: In[Tensor[32, 16, f32]], Y: Out[Tensor[32, 16, f32]]):
    T: Tensor[8, 16, f32]
    for k in P(4):
        produce_the_intermediate_tile_abcd[k](X.tile(k, 0), T)
        consume_the_intermediate_tile_abcd[k](T, Y.tile(k, 0))


@schedule(fused_long_names)
def fused_long_names_schedule():
    buffer("T", "local")


@program
def decode_pipeline_for_layer_zero(X: In[Tensor[32, 16, f32]], Y: Out[Tensor[32, 16, f32]]):
    c = Channel[Tile[8, 16, f32]](depth=2)

    @process(produces=[c])
    def load_and_scale_the_input_tiles_xxxx():
        for i in range(4):
            send(c, adds(load(X.tile(i, 0, shape=(8, 16))), 3.0))

    @process(consumes=[c])
    def store_the_tiles():
        for i in range(4):
            store(Y.tile(i, 0, shape=(8, 16)), recv(c))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_generated_kernel_names_longer_than_the_runtime_takes(tmp_path, target):
    x = np.arange(512, dtype=np.float32).reshape(32, 16)
    ctx = htp.Context()
    for fn in (fused_long_names, decode_pipeline_for_layer_zero):
        r = htp.bind(ctx.compile(fn, target=target, out=tmp_path / fn.__name__), ctx).run(X=x)
        np.testing.assert_array_equal(r["Y"], x + 3, err_msg=fn.__name__)
    if target == "pto-a2a3sim":
        config = (tmp_path / "fused_long_names" / "codegen" / "pto" / "kernel_config.py").read_text()
        names = re.findall(r'"name": "([^"]+)"', config.split("KERNELS = [", 1)[1])
        assert names and all(len(n) <= 64 for n in names), names
        assert any(n.startswith("produce_the_intermediate_tile_abcd__consume_the_int") for n in names), names


# Python's negative bounds in a kernel's views: `x[-8:, :]` was tile.view-out-of-bounds "this view of 'X' is 40 long
# in dim 0" (the -8 taken as an offset) on both targets. A constant negative index or bound counts from the end.
@kernel
def from_the_end(X: In[Tensor[32, 16, f32]], Y: Out[Tensor[8, 16, f32]], Z: Out[Tensor[1, 16, f32]],
                 W: Out[Tensor[31, 16, f32]]):
    store(Y, adds(load(X[-8:, :]), 1.0))
    store(Z, load(X[-1, :]))
    store(W, load(X[:-1, :]))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_negative_view_bounds_count_from_the_end(tmp_path, target):
    x = np.arange(512, dtype=np.float32).reshape(32, 16)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(from_the_end, target=target, out=tmp_path / "p"), ctx).run(X=x)
    np.testing.assert_array_equal(r["Y"], x[-8:, :] + 1)
    np.testing.assert_array_equal(r["Z"], x[-1:, :])
    np.testing.assert_array_equal(r["W"], x[:-1, :])


# A kernel entry storing only part of an Out tensor: aie-npu1 moved the core's whole output object back, so the rows
# the kernel does not store became zeros in the caller's array; pto-a2a3sim left them as they were. An Out whose
# stores do not cover it (part of it, a loop of runtime trip count) is now moved in first on aie, like an InOut.
@kernel
def first_half(X: In[Tensor[32, 16, f32]], Y: Out[Tensor[32, 16, f32]]):
    store(Y[0:16, :], adds(load(X[0:16, :]), 1.0))


@kernel
def first_n_tiles(X: In[Tensor[32, 16, f32]], Y: Out[Tensor[32, 16, f32]], n: Scalar[i32]):
    for i in range(n):
        store(Y.tile(i, 0, shape=(8, 16)), adds(load(X.tile(i, 0, shape=(8, 16))), 1.0))


@kernel
def every_tile(X: In[Tensor[32, 16, f32]], Y: Out[Tensor[32, 16, f32]]):
    for i in range(4):
        store(Y.tile(i, 0, shape=(8, 16)), adds(load(X.tile(i, 0, shape=(8, 16))), 1.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_elements_of_an_out_tensor_the_kernel_does_not_store_keep_their_values(tmp_path, target):
    x = np.arange(512, dtype=np.float32).reshape(32, 16)
    ctx = htp.Context()
    for fn, args, rows in ((first_half, {}, 16), (first_n_tiles, {"n": 2}, 16), (every_tile, {}, 32)):
        y = np.full((32, 16), 5.0, np.float32)
        r = htp.bind(ctx.compile(fn, target=target, out=tmp_path / fn.__name__), ctx).run(X=x, Y=y, **args)
        want = np.full((32, 16), 5.0, np.float32)
        want[:rows] = x[:rows] + 1
        np.testing.assert_array_equal(r["Y"], want, err_msg=fn.__name__)
    # Omitted, it is still an output: allocated (zeros), not a missing input.
    r = htp.bind(ctx.compile(first_half, target=target, out=tmp_path / "omitted"), ctx).run(X=x)
    np.testing.assert_array_equal(r["Y"][:16], x[:16] + 1)
    np.testing.assert_array_equal(r["Y"][16:], np.zeros((16, 16), np.float32))


# A loop's step of 0 known only at run time (`range(0, 4, s)` with s = 0): Python raises ValueError; both targets ran
# no iteration, silently (a constant 0 was already tile.range). It is a run error now.
@kernel
def stepped(X: In[Tensor[32, 16, f32]], Y: Out[Tensor[32, 16, f32]], s: Scalar[i32]):
    for i in range(0, 4, s):
        store(Y.tile(i, 0, shape=(8, 16)), adds(load(X.tile(i, 0, shape=(8, 16))), 1.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_loop_step_of_zero_at_run_time_is_a_run_error(tmp_path, target):
    x = np.arange(512, dtype=np.float32).reshape(32, 16)
    ctx = htp.Context()
    with pytest.warns(htp.CompileWarning, match="out-maybe-unwritten"):
        bound = htp.bind(ctx.compile(stepped, target=target, out=tmp_path / "p"), ctx)
    np.testing.assert_array_equal(bound.run(X=x, s=1)["Y"], x + 1)
    with pytest.raises(htp.RunError, match=r"range\(\) step is 0 at run time"):
        bound.run(X=x, s=0)


# Two buffer() directives the backend cannot apply: both errors were placed at the schedule's `def` line, so
# neither said which directive it meant. Each is at its call now (wsp.md §2: "rejected at its span").
@kernel
def doubled_block(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    store(y, muls(load(x), 2.0))


@workload
def three_passes(X: In[Tensor[64, 64, f32]], Y: Out[Tensor[64, 64, f32]]):
    A: Tensor[64, 64, f32]
    B: Tensor[64, 64, f32]
    for t in P(4):
        doubled_block[t](X.tile(t, 0), A.tile(t, 0))
    for t in P(4):
        doubled_block[t](A.tile(t, 0), B.tile(t, 0))
    for t in P(4):
        doubled_block[t](B.tile(t, 0), Y.tile(t, 0))


@schedule(three_passes)
def keep_both():
    buffer("A", "local")
    buffer("B", "local")


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_each_buffer_directive_is_reported_at_its_call(tmp_path, target):
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(three_passes, target=target, out=tmp_path / "p")
    lines = open(__file__).read().splitlines()
    want = [i for i, t in enumerate(lines, 1) if t.strip() in ('buffer("A", "local")', 'buffer("B", "local")')]
    got = sorted(d.span["line"] for d in e.value.errors if "schedule-buffer" in d.code)
    assert got == want, str(e.value)


# A workload's integer expression past 64 bits (n * n at n = 2**32) wrapped on pto-a2a3sim (2**64 became 0, so
# `n * n > 0` was false and the launch skipped) and was rounded through a double on aie-npu1 (true); wsp.md
# evaluates them in 64 bits. Both now stop with a run error naming the operation, at the line. As in Python, an
# `and` / `or` / `a if c else b` does not evaluate the operand it settles without (aie evaluated both: a
# division by zero at n = 0).
from htp.dialects.tile import InOut  # noqa: E402


@kernel
def add_one(x: InOut[Tensor[16, 16, f32]]):
    store(x, adds(load(x), 1.0))


@workload
def bump_if_square_positive(X: InOut[Tensor[16, 16, f32]], n: int):
    with P.when(n * n > 0):
        add_one(X)
    with P.when(n != 0 and 64 // n > 2):
        add_one(X)
    with P.when(n == 0 or 64 // n < 0):
        add_one(X)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_workload_integer_expressions_are_exact_or_a_run_error(tmp_path, target):
    ctx = htp.Context()
    bound = htp.bind(ctx.compile(bump_if_square_positive, target=target, out=tmp_path / "w"), ctx)
    for n, want in ((3, 2), (0, 1), (-3, 2), (2**31, 1), (-2**31, 2)):
        X = bound.run(X=np.zeros((16, 16), np.float32), n=n)["X"]
        assert X[0, 0] == want, f"n={n}"
    with pytest.raises(htp.RunError, match=r"'mul' of 4294967296 and 4294967296 overflows 64 bits") as e:
        bound.run(X=np.zeros((16, 16), np.float32), n=2**32)
    span = e.value.errors[0].span
    line = [i for i, t in enumerate(open(__file__).read().splitlines(), 1) if "with P.when(n * n > 0):" in t][0]
    assert (span["file"].rsplit("/", 1)[-1], span["line"]) == ("test_portable_ops.py", line)


# Cube and vector work inside one `if` on a scalar parameter: a prologue before the matmul in one branch, an
# activation after it, or one branch doing a matmul and the other vector work. pto-a2a3sim refused each as
# pto.core-type (a kernel is split between statements, and this mix was inside one); aie-npu1 ran them. The
# `if` is now distributed into `if`s of one core type each under the same condition, which the split cuts
# between.
@kernel
def prologue_in_a_branch(a: In[Tensor[16, 16, f32]], b: In[Tensor[16, 16, f32]], y: Out[Tensor[16, 16, f32]],
                         n: int):
    ta = load(a)
    tb = load(b)
    if n == 0:
        acc = matmul(ta, adds(tb, 1.0))
    else:
        acc = matmul(ta, tb)
    store(y, acc)


@kernel
def activation_in_a_branch(a: In[Tensor[16, 16, f32]], b: In[Tensor[16, 16, f32]], y: Out[Tensor[16, 16, f32]],
                           n: int):
    ta = load(a)
    tb = load(b)
    if n > 0:
        r = relu(matmul(ta, tb))
    else:
        r = matmul(ta, tb)
    store(y, r)


@kernel
def matmul_or_vector(a: In[Tensor[16, 16, f32]], b: In[Tensor[16, 16, f32]], y: Out[Tensor[16, 16, f32]],
                     n: int):
    ta = load(a)
    tb = load(b)
    if n == 1 or n == 3:
        r = adds(ta, 2.0)
    else:
        r = matmul(ta, tb)
    store(y, muls(r, 0.5))


# A matmul under an `if` replacing a register computed before it (an optional projection): pto-a2a3sim refused
# `p = adds(a, 1.0)` then `if n == 0: p = matmul(a, b)` with "result 'p' is planned in L0C but the contract
# places it in GM" at the kernel's def line, and `h = load(x)` then `if n > 0: h = matmul(h, load(w))` as
# pto.core-type; aie-npu1 ran both. The matmul's part now hands the register on from its branch, and what
# reads it after the `if` runs on the vector core.
@kernel
def matmul_over_a_vector_result(a: In[Tensor[16, 16, f32]], b: In[Tensor[16, 16, f32]],
                                y: Out[Tensor[16, 16, f32]], n: int):
    ta = load(a)
    p = adds(ta, 1.0)
    if n == 0:
        p = matmul(ta, load(b))
    store(y, p)


@kernel
def optional_projection(a: In[Tensor[16, 16, f32]], b: In[Tensor[16, 16, f32]], y: Out[Tensor[16, 16, f32]],
                        n: int):
    h = load(a)
    if n > 0:
        h = matmul(h, load(b))
    store(y, muls(h, 2.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_matmul_under_an_if_replacing_a_register_runs(tmp_path, target):
    rng = np.random.default_rng(22)
    A = rng.standard_normal((16, 16)).astype(np.float32)
    B = rng.standard_normal((16, 16)).astype(np.float32)
    ctx = htp.Context()
    cases = [
        (matmul_over_a_vector_result, lambda n: A @ B if n == 0 else A + 1),
        (optional_projection, lambda n: (A @ B if n > 0 else A) * 2),
    ]
    for fn, want in cases:
        run = htp.bind(ctx.compile(fn, target, tmp_path / fn.__name__), ctx)
        for n in (0, 1):
            np.testing.assert_allclose(run.run(a=A, b=B, n=n)["y"], want(n), rtol=1e-4, atol=1e-4,
                                       err_msg=f"{fn.__name__} n={n}")


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_cube_and_vector_work_in_one_branch_run(tmp_path, target):
    rng = np.random.default_rng(21)
    A = rng.standard_normal((16, 16)).astype(np.float32)
    B = rng.standard_normal((16, 16)).astype(np.float32)
    ctx = htp.Context()
    cases = [
        (prologue_in_a_branch, lambda n: A @ (B + 1) if n == 0 else A @ B),
        (activation_in_a_branch, lambda n: np.maximum(A @ B, 0) if n > 0 else A @ B),
        (matmul_or_vector, lambda n: ((A + 2) if n in (1, 3) else A @ B) * 0.5),
    ]
    for fn, want in cases:
        run = htp.bind(ctx.compile(fn, target, tmp_path / fn.__name__), ctx)
        for n in (0, 1, 3):
            np.testing.assert_allclose(run.run(a=A, b=B, n=n)["y"], want(n), rtol=1e-4, atol=1e-4,
                                       err_msg=f"{fn.__name__} n={n}")


# A register computed before an `if` on a scalar parameter and replaced in one branch through a matmul: scaled
# first (`h = muls(h, 0.5); h = matmul(h, w)`), the branch mixing vector and cube work both ways, and a matmul
# replacing a register next to vector work reading it (a residual). pto-a2a3sim returned h's garbage for the
# first two when the branch did not run (the vector part handed h on only from inside its branch, so the
# register's earlier value never reached the parts after it) and refused the third (pto.core-type); aie-npu1
# ran all three. A vector part now hands on what it holds whichever branch ran, and a cube part stores the
# register right after each statement defining it.
@kernel
def scaled_then_projected(x: In[Tensor[32, 32, f32]], w: In[Tensor[32, 32, f32]], y: Out[Tensor[32, 32, f32]],
                          n: Scalar[i32]):
    h = load(x)
    if n > 0:
        h = muls(h, 0.5)
        h = matmul(h, load(w))
    store(y, h)


@kernel
def projected_either_way(x: In[Tensor[32, 32, f32]], w: In[Tensor[32, 32, f32]], y: Out[Tensor[32, 32, f32]],
                         n: Scalar[i32]):
    h = exp(muls(load(x), 0.1))
    if n > 0:
        h = adds(h, 1.0)
        h = matmul(h, load(w))
    else:
        h = matmul(load(w), h)
        h = muls(h, 2.0)
    store(y, h)


@kernel
def residual_projection(x: In[Tensor[32, 32, f32]], w: In[Tensor[32, 32, f32]], y: Out[Tensor[32, 32, f32]],
                        n: Scalar[i32]):
    h = load(x)
    r = adds(h, 0.5)
    if n > 0:
        r = matmul(h, load(w))
        h = sub(h, r)
    store(y, add(h, r))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_register_replaced_through_a_matmul_in_one_branch_keeps_its_value_on_the_other(tmp_path, target):
    rng = np.random.default_rng(167)
    X = (rng.standard_normal((32, 32)) * 0.2).astype(np.float32)
    W = (rng.standard_normal((32, 32)) * 0.2).astype(np.float32)
    E = np.exp(X * np.float32(0.1))
    ctx = htp.Context()
    cases = [
        (scaled_then_projected, lambda n: (X * 0.5) @ W if n > 0 else X),
        (projected_either_way, lambda n: (E + 1) @ W if n > 0 else (W @ E) * 2),
        (residual_projection, lambda n: X if n > 0 else X + (X + 0.5)),
    ]
    for fn, want in cases:
        run = htp.bind(ctx.compile(fn, target, tmp_path / fn.__name__), ctx)
        for n in (0, 1):
            np.testing.assert_allclose(run.run(x=X, w=W, n=n)["y"], want(n), rtol=1e-4, atol=1e-5,
                                       err_msg=f"{fn.__name__} at n={n}")


# Two matmuls chained in one branch of an `if`, the second reading the first's result: an optional second layer.
# pto-a2a3sim refused it (pto.core-type: an a2a3 accumulator leaves the cube core only through global memory, and
# the chain was inside one statement); aie-npu1 ran it. The branch is cut between the two matmuls into `if`s of
# their own, which the split puts in parts of their own.
@kernel
def optional_second_layer(x: In[Tensor[32, 32, f32]], w1: In[Tensor[32, 32, f32]], w2: In[Tensor[32, 32, f32]],
                          y: Out[Tensor[32, 32, f32]], layers: Scalar[i32]):
    t = load(x)
    if layers > 1:
        h1 = matmul(t, load(w1))
        h = matmul(h1, load(w2))
    else:
        h = matmul(t, load(w1))
    store(y, relu(h))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_matmuls_chained_in_one_branch_run(tmp_path, target):
    rng = np.random.default_rng(16)
    X, W1, W2 = [(rng.standard_normal((32, 32)) * 0.2).astype(np.float32) for _ in range(3)]
    ctx = htp.Context()
    run = htp.bind(ctx.compile(optional_second_layer, target, tmp_path / "k"), ctx)
    for layers in (1, 2):
        want = np.maximum((X @ W1) @ W2 if layers > 1 else X @ W1, 0)
        np.testing.assert_allclose(run.run(x=X, w1=W1, w2=W2, layers=layers)["y"], want, rtol=1e-4, atol=1e-5)


# One tile as both operands of a matmul (`matmul(t, t)`, in f32 and f16), and a tile on the left of one matmul and
# on the right of another in the two branches of an `if` (distributed into one cube `if`). pto-a2a3sim refused
# them ("tile 't' is used in two cube roles"); aie-npu1 ran them. The tile's L1 copy is moved into both L0A and
# L0B when it pads alike in the two roles.
@kernel
def square_of_a_tile(x: In[Tensor[32, 32, f32]], y: Out[Tensor[32, 32, f32]]):
    t = load(x)
    store(y, matmul(t, t))


@kernel
def square_of_a_half_tile(x: In[Tensor[16, 16, f16]], y: Out[Tensor[16, 16, f32]]):
    t = load(x)
    store(y, matmul(t, t))


@kernel
def product_either_way(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], y: Out[Tensor[32, 32, f32]],
                       n: Scalar[i32]):
    ta = load(a)
    tb = load(b)
    if n > 0:
        r = matmul(ta, tb)
    else:
        r = matmul(tb, ta)
    store(y, relu(r))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_tile_on_both_sides_of_a_matmul_runs(tmp_path, target):
    rng = np.random.default_rng(31)
    A = (rng.standard_normal((32, 32)) * 0.3).astype(np.float32)
    B = (rng.standard_normal((32, 32)) * 0.3).astype(np.float32)
    H = (rng.standard_normal((16, 16)) * 0.3).astype(np.float16)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(square_of_a_tile, target, tmp_path / "sq"), ctx).run(x=A)
    np.testing.assert_allclose(r["y"], A @ A, rtol=1e-4, atol=1e-5)
    r = htp.bind(ctx.compile(square_of_a_half_tile, target, tmp_path / "sq16"), ctx).run(x=H)
    H32 = H.astype(np.float32)
    np.testing.assert_allclose(r["y"], H32 @ H32, rtol=1e-3, atol=1e-3)
    run = htp.bind(ctx.compile(product_either_way, target, tmp_path / "either"), ctx)
    for n in (0, 1):
        want = np.maximum(A @ B if n > 0 else B @ A, 0)
        np.testing.assert_allclose(run.run(a=A, b=B, n=n)["y"], want, rtol=1e-4, atol=1e-5, err_msg=f"n={n}")


# A register name reused for a later matmul's result: the input tile of a first layer holds the second layer's
# output (`t = load(x); h = matmul(t, w1); t = matmul(h, w2)`), directly or after vector work on h.
# pto-a2a3sim refused both ("pto.load: result 't' is planned in L0C ... a matmul accumulator cannot be loaded"):
# the second part was handed t's first value, which it never reads, into its accumulator. aie-npu1 ran both.
# A part is now handed only what it reads before defining it.
@kernel
def second_layer_into_the_input_name(x: In[Tensor[32, 32, f32]], w1: In[Tensor[32, 32, f32]],
                                     w2: In[Tensor[32, 32, f32]], y: Out[Tensor[32, 32, f32]]):
    t = load(x)
    h = matmul(t, load(w1))
    t = matmul(h, load(w2))
    store(y, t)


@kernel
def activated_second_layer_into_the_input_name(x: In[Tensor[32, 32, f32]], w1: In[Tensor[32, 32, f32]],
                                               w2: In[Tensor[32, 32, f32]], y: Out[Tensor[32, 32, f32]]):
    t = load(x)
    h = matmul(t, load(w1))
    t = relu(h)
    t = matmul(t, load(w2))
    store(y, t)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_register_name_reused_for_a_later_matmul_runs(tmp_path, target):
    rng = np.random.default_rng(4)
    X, W1, W2 = [(rng.standard_normal((32, 32)) * 0.2).astype(np.float32) for _ in range(3)]
    ctx = htp.Context()
    for fn, want in [(second_layer_into_the_input_name, (X @ W1) @ W2),
                     (activated_second_layer_into_the_input_name, np.maximum(X @ W1, 0) @ W2)]:
        r = htp.bind(ctx.compile(fn, target, tmp_path / fn.__name__), ctx).run(x=X, w1=W1, w2=W2)
        np.testing.assert_allclose(r["y"], want, rtol=1e-4, atol=1e-5, err_msg=fn.__name__)


# Three ways a kernel written naturally met pto-a2a3sim's per-name placement of registers, each run by aie-npu1:
# a name reused for a fill after it held a matmul's result (pto.contract: "accumulator 't' can only be reset to
# 0"), a matmul accumulating onto a tile vector work computed (pto.memory-space: "a matmul accumulator cannot be
# loaded"), and an `if` inside a branch mixing cube and vector work (pto.core-type). Registers are now one per
# value (webs), a matmul accumulating onto anything but a matmul's result becomes a product added on the vector
# core, and nested `if`s are distributed from the inside out.
@kernel
def name_reused_for_a_fill(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], y: Out[Tensor[32, 32, f32]],
                           z: Out[Tensor[32, 32, f32]]):
    t = matmul(load(a), load(b))
    store(y, t)
    t = full((32, 32), 1.0, f32)
    store(z, adds(t, 1.0))


@kernel
def accumulated_onto_a_scaled_tile(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]],
                                   y: Out[Tensor[32, 32, f32]], z: Out[Tensor[32, 32, f32]]):
    ta = load(a)
    acc = muls(ta, 0.5)
    acc = matmul(ta, load(b), acc)
    store(y, acc)
    store(z, ta)


@kernel
def projection_under_two_conditions(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]],
                                    y: Out[Tensor[32, 32, f32]], z: Out[Tensor[32, 32, f32]], n: Scalar[i32],
                                    m: Scalar[i32]):
    h = load(a)
    if n > 0:
        if m > 0:
            h = matmul(h, load(b))
        else:
            h = relu(h)
        h = adds(h, 1.0)
    store(y, h)
    store(z, h)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_names_reused_and_nested_branches_around_matmuls_run(tmp_path, target):
    rng = np.random.default_rng(6)
    A, B = [(rng.standard_normal((32, 32)) * 0.2).astype(np.float32) for _ in range(2)]
    ctx = htp.Context()
    r = htp.bind(ctx.compile(name_reused_for_a_fill, target, tmp_path / "fill"), ctx).run(a=A, b=B)
    np.testing.assert_allclose(r["y"], A @ B, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(r["z"], np.full((32, 32), 2.0, np.float32))
    r = htp.bind(ctx.compile(accumulated_onto_a_scaled_tile, target, tmp_path / "acc"), ctx).run(a=A, b=B)
    np.testing.assert_allclose(r["y"], A * 0.5 + A @ B, rtol=1e-4, atol=1e-5)
    run = htp.bind(ctx.compile(projection_under_two_conditions, target, tmp_path / "nested"), ctx)
    for n, m in ((0, 1), (1, 0), (1, 1)):
        want = A if n == 0 else (A @ B if m > 0 else np.maximum(A, 0)) + 1
        np.testing.assert_allclose(run.run(a=A, b=B, n=n, m=m)["y"], want, rtol=1e-4, atol=1e-5, err_msg=f"{n}, {m}")


# Two branches each ending or starting in cube work where one register changes role: the then branch's last
# matmul writes p (an accumulator), the else branch's first reads p as an operand. Distributing the `if` put the
# two in one cube `if`, one kernel holding p in L0C and in L1: pto-a2a3sim refused it ("tile 'p' is used in two
# cube roles"); aie-npu1 ran it. Such runs now go to `if`s of their own.
@kernel
def two_products_or_one_accumulated(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]],
                                    y: Out[Tensor[32, 32, f32]], n: Scalar[i32]):
    p = load(a)
    q = load(b)
    r = adds(p, 0.5)
    if n == 0:
        p = matmul(r, q)
        r = adds(r, 0.5)
        p = matmul(q, r)
    else:
        q = matmul(p, r, q)
    store(y, add(p, q))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_register_changing_cube_role_between_branches_runs(tmp_path, target):
    rng = np.random.default_rng(108)
    A, B = [(rng.standard_normal((32, 32)) * 0.2).astype(np.float32) for _ in range(2)]
    ctx = htp.Context()
    run = htp.bind(ctx.compile(two_products_or_one_accumulated, target, tmp_path / "k"), ctx)
    R = A + 0.5
    for n, want in ((0, B @ (R + 0.5) + B), (1, A + (A @ R + B))):
        np.testing.assert_allclose(run.run(a=A, b=B, n=n)["y"], want, rtol=1e-4, atol=1e-5, err_msg=f"n={n}")


# A K-loop whose static bounds give no iteration (a configuration with no input blocks; the checker warns
# tile.empty-loop), its accumulator stored after it and read by vector work. aie-npu1 stores zeros;
# pto-a2a3sim failed the run ("accumulator 'acc' is stored with no matmul since its full()"), the probe's mutants
# 34059 and 34223. backend-pto drops loops that run no iteration, so the accumulator holds its fill.
NO_K_BLOCKS = 0


@kernel
def projection_with_no_k_blocks(x: In[Tensor[32, 64, f32]], w: In[Tensor[64, 32, f32]], b: In[Tensor[1, 32, f32]],
                                c: Out[Tensor[32, 32, f32]], h: Out[Tensor[32, 32, f32]]):
    acc = full((32, 32), 0.0, f32)
    for k in range(NO_K_BLOCKS):
        acc = matmul(load(x[:, k * 32:(k + 1) * 32]), load(w[k * 32:(k + 1) * 32, :]), acc)
    store(c, acc)
    store(h, relu(colexpand_add(acc, load(b))))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_accumulator_after_a_loop_of_no_iteration_holds_zeros(tmp_path, target):
    rng = np.random.default_rng(34223)
    X = rng.standard_normal((32, 64)).astype(np.float32)
    W = rng.standard_normal((64, 32)).astype(np.float32)
    B = rng.standard_normal((1, 32)).astype(np.float32)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(projection_with_no_k_blocks, target, tmp_path / "k"), ctx).run(x=X, w=W, b=B)
    np.testing.assert_array_equal(r["c"], np.zeros((32, 32), np.float32))
    np.testing.assert_array_equal(r["h"], np.maximum(np.broadcast_to(B, (32, 32)), 0))
