"""Kernel entries written as docs/dialects/tile.md writes them, with runtime scalars in view offsets and in
expressions. On AIE a view offset from a scalar runs as one host-orchestrated task whose objects travel packed
in one buffer each way, and a buffer of 8193 words (two 128 x 32 f32 tensors and a scalar) had no DMA access
pattern (aie.dma-pattern); the buffers are now padded to a length one transfer can move. A scalar register
(s = k * 2.0 + 1.0) used as a scalar operand was read as an integer on AIE (4.5 became 4: wrong results), a
`full` of an expression did not compile there, and a loop over row tiles whose variable is read as a value was
not streamed. Both targets against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import htp
from htp.dialects.tile import (In, InOut, Out, Scalar, Tensor, add, adds, divs, f32, full, i32, kernel, load, maxs, mins,
                               muls, rowsum, store, subs)


@kernel
def shifted_rows(x: In[Tensor[128, 32, f32]], start: Scalar[i32], y: InOut[Tensor[128, 32, f32]]):
    for i in range(4):
        off = (start + i) * 16
        store(y[off:off + 16, :], adds(load(x[off:off + 16, :]), 1.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_view_offset_from_a_runtime_scalar_updates_the_rows_it_names(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile(shifted_rows, target, tmp_path / "pkg")
    x = np.random.default_rng(45).standard_normal((128, 32)).astype(np.float32)
    for start in (2, 3):
        y = np.full((128, 32), -1.0, np.float32)
        want = y.copy()
        want[start * 16:start * 16 + 64] = x[start * 16:start * 16 + 64] + 1
        np.testing.assert_array_equal(htp.bind(pkg, ctx).run(x=x, start=start, y=y)["y"], want)


N, R = 64, 16


@kernel
def scalar_exprs(X: In[Tensor[64, 64, f32]], k: Scalar[f32], n: Scalar[i32], Y: Out[Tensor[64, 64, f32]],
                 M: Out[Tensor[64, 1, f32]]):
    for r in range(N // R):
        t = load(X.tile(r, 0, shape=(R, N)))
        store(M.tile(r, 0, shape=(R, 1)), muls(rowsum(t), 1.0 / N))
        s = k * 2.0 + 1.0
        u = adds(muls(t, s), r * 0.25)
        u2 = subs(divs(u, k + 1.0), n * 2 + r)
        u3 = mins(maxs(u2, -2.5), k)
        store(Y.tile(r, 0, shape=(R, N)), add(u3, full((R, N), n * 1.5 - 1.0)))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_scalar_registers_and_the_loop_variable_are_values_in_expressions(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile(scalar_exprs, target, tmp_path / "pkg")
    x = np.random.default_rng(44).standard_normal((64, 64)).astype(np.float32) * 3
    k, n = 1.75, 3
    r = htp.bind(pkg, ctx).run(X=x, k=k, n=n)
    rows = np.repeat(np.arange(4, dtype=np.float32), 16)[:, None]
    u2 = (x * (k * 2 + 1) + rows * 0.25) / (k + 1) - (n * 2 + rows)
    np.testing.assert_allclose(r["Y"], np.minimum(np.maximum(u2, -2.5), k) + (n * 1.5 - 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["M"], x.mean(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_a_scalar_argument_of_the_wrong_kind_names_the_parameter(tmp_path):
    # python.md: a wrong dtype, or an object that is not what the parameter takes, is htp.ArgumentTypeError
    # naming the argument (an array for a scalar said "missing scalar argument"; 2.7 for an i32 was truncated).
    ctx = htp.Context()
    pkg = ctx.compile(shifted_rows, "pto-a2a3sim", tmp_path / "pkg")
    x, y = np.zeros((128, 32), np.float32), np.zeros((128, 32), np.float32)
    with pytest.raises(htp.ArgumentTypeError, match=r"argument 'start' is a scalar parameter \(i32\), got a ndarray"):
        htp.bind(pkg, ctx).run(x=x, start=np.ones(2), y=y)
    with pytest.raises(htp.ArgumentTypeError, match=r"argument 'start' is an integer parameter \(i32\), got 2.7"):
        htp.bind(pkg, ctx).run(x=x, start=2.7, y=y)
    htp.bind(pkg, ctx).run(x=x, start=2.0, y=y)  # a whole float is that integer


# An early `return` (tile.md: "ends the kernel"), as a guard: both targets ran the statements after it anyway
# (the tile IR had no return), so Y was written whatever the flag. The statements after an `if` that returns
# now run only on the paths that do not; a return inside a loop is refused (tile.return-in-loop).
@kernel
def guarded(X: In[Tensor[8, 16, f32]], Y: InOut[Tensor[8, 16, f32]], flag: Scalar[i32]):
    if flag > 0:
        store(Y, adds(load(X), 2.0))
        return
    elif flag < 0:
        return
    store(Y, adds(load(X), 1.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_early_return_ends_the_kernel(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile(guarded, target, tmp_path / "pkg")
    X = np.random.default_rng(23).standard_normal((8, 16)).astype(np.float32)
    for flag, want in ((0, X + 1), (1, X + 2), (-1, np.zeros_like(X))):
        r = htp.bind(pkg, ctx).run(X=X, Y=np.zeros_like(X), flag=flag)
        np.testing.assert_allclose(r["Y"], want, rtol=1e-6, err_msg=f"flag {flag}")


@kernel
def return_in_loop(X: In[Tensor[32, 16, f32]], Y: Out[Tensor[32, 16, f32]]):
    for i in range(4):
        if i == 2:
            return
        store(Y[i * 8:(i + 1) * 8, :], load(X[i * 8:(i + 1) * 8, :]))


def test_an_early_return_inside_a_loop_is_refused(tmp_path):
    with pytest.raises(htp.CompileError, match=r"an early 'return' inside a loop is not lowered.*\[tile.return-in-loop\]"):
        htp.Context().compile(return_in_loop, "pto-a2a3sim", tmp_path / "pkg")


# `n: int`, `scale: float` and `flag: bool` are what a Python user writes, and what workload and CSP parameters
# take; a kernel's were "unknown type annotation" (tile.param-type). They are Scalar[i64], Scalar[f32] and
# Scalar[i8], as there.
@kernel
def python_typed(X: In[Tensor[64, 16, f32]], Y: InOut[Tensor[64, 16, f32]], n: int, scale: float, flag: bool):
    for i in range(n):
        t = muls(load(X[i * 16:i * 16 + 16, :]), scale)
        if flag:
            t = adds(t, 1.0)
        store(Y[i * 16:i * 16 + 16, :], t)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_python_scalar_types_are_kernel_parameters(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile(python_typed, target, tmp_path / "pkg")
    X = np.random.default_rng(31).standard_normal((64, 16)).astype(np.float32)
    for n, scale, flag in ((3, 0.5, True), (4, -2.25, False)):
        want = np.zeros_like(X)
        want[:n * 16] = X[:n * 16] * np.float32(scale) + (1.0 if flag else 0.0)
        r = htp.bind(pkg, ctx).run(X=X, Y=np.zeros_like(X), n=n, scale=scale, flag=flag)
        np.testing.assert_allclose(r["Y"], want, rtol=1e-6, err_msg=f"n={n} scale={scale} flag={flag}")


# An Out stored only in `for i in range(0)` was warned as "written only inside a loop whose trip count is not
# known statically" (the count is known: 0) and compiled. The loop writes nothing: the Out is never written.
@kernel
def stores_in_an_empty_loop(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]]):
    for i in range(0):
        store(y, adds(load(x), 1.0))


def test_an_out_stored_only_in_a_loop_of_zero_iterations_is_never_written(tmp_path):
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(stores_in_an_empty_loop, "pto-a2a3sim", tmp_path / "pkg")
    assert [d.code for d in e.value.errors] == ["tile.out-not-written"], e.value
    assert "Out parameter 'y' of kernel 'stores_in_an_empty_loop' is never written" in e.value.errors[0].message


# A kernel entry named by a long Python identifier (252 characters) was package.path on pto-a2a3sim, at no line:
# its orchestration file's name passed the 255 bytes a path component may have. The file keeps the name's first
# 200 characters and a hash of it.
@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_kernel_with_a_very_long_name(tmp_path, target):
    import importlib.util
    name = "k_" + "a" * 250
    source = tmp_path / "long_name.py"
    source.write_text("from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, exp\n\n\n@kernel\n"
                      f"def {name}(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]]):\n    store(y, exp(load(x)))\n")
    spec = importlib.util.spec_from_file_location("long_name", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ctx = htp.Context()
    x = np.random.default_rng(4).standard_normal((16, 32)).astype(np.float32)
    pkg = ctx.compile(getattr(module, name), target, tmp_path / "pkg")
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(x=x)["y"], np.exp(x), rtol=1e-5)


# A 5000-term scalar sum (CPython imports it under a raised recursion limit) passed HTP's nesting limit with a
# JSON path and no line: `$.root.body[0].body[0].value.left.left...: AST nested deeper than 5000 nodes`. It is
# ast.depth at the expression now.
def test_an_expression_nested_past_the_limit_is_placed_at_its_line(tmp_path):
    import importlib.util
    import sys
    source = tmp_path / "deep_sum.py"
    source.write_text("from htp.dialects.tile import kernel, Tensor, In, Out, Scalar, f32, i32, load, store, adds\n\n\n"
                      "@kernel\ndef deep(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]], n: Scalar[i32]):\n"
                      f"    s = n{' + 1' * 5000}\n    store(y, adds(load(x), s))\n")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 12000))
    try:
        spec = importlib.util.spec_from_file_location("deep_sum", source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with pytest.raises(htp.CompileError) as e:
            htp.Context().compile(module.deep, "pto-a2a3sim", tmp_path / "pkg")
    finally:
        sys.setrecursionlimit(limit)
    [d] = e.value.errors
    assert d.code == "ast.depth" and (d.span["file"], d.span["line"]) == (str(source), 6), d
    assert "nests deeper than 5000 levels here" in d.message


# A long straight-line kernel (a generator's unrolled code): aie-sim's first run compiled it as one C++ function,
# and g++ -O2 grew faster than its length (1200 tile statements: a minute; 2400: past two). The kernel source now
# holds runs of 32 statements, each a function of its own, at every level (a loop's long body too); pto-a2a3sim
# calls one library function per statement. Both against NumPy, with the runs checked in the aie source.
def _long_kernel(n_top, n_loop):
    import random
    r = random.Random(n_top)
    forms = [("t{a} = adds(t{b}, 0.25)", lambda t, a, b, c: t[b] + np.float32(0.25)),
             ("t{a} = muls(t{b}, 0.5)", lambda t, a, b, c: t[b] * np.float32(0.5)),
             ("t{a} = sub(t{b}, t{c})", lambda t, a, b, c: t[b] - t[c]),
             ("t{a} = maxs(t{b}, -2.0)", lambda t, a, b, c: np.maximum(t[b], np.float32(-2.0))),
             ("t{a} = add(t{b}, t{c})", lambda t, a, b, c: t[b] + t[c])]
    picks = [(r.choice(forms), r.randrange(4), r.randrange(4), r.randrange(4)) for _ in range(n_top + n_loop)]
    line = lambda p, pad: pad + p[0][0].format(a=p[1], b=p[2], c=p[3])
    lines = ["from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add, sub, adds, muls, maxs",
             "", "", "@kernel", "def unrolled(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]]):",
             "    x0 = load(x)"] + [f"    t{k} = muls(x0, {k + 1}.0)" for k in range(4)]
    lines += [line(p, "    ") for p in picks[:n_top]]
    lines += ["    for i in range(2):"] + [line(p, "        ") for p in picks[n_top:]]
    lines += ["    store(y, add(add(t0, t1), add(t2, t3)))"]

    def reference(x):
        t = [x * np.float32(k + 1) for k in range(4)]
        for loop, ps in ((1, picks[:n_top]), (2, picks[n_top:])):
            for _ in range(loop):
                for (form, a, b, c) in ps:
                    t[a] = form[1](t, a, b, c).astype(np.float32)
        return (t[0] + t[1]) + (t[2] + t[3])
    return "\n".join(lines) + "\n", reference


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_long_straight_line_kernel(tmp_path, target):
    import importlib.util
    source, reference = _long_kernel(300, 70)
    path = tmp_path / "unrolled.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("unrolled", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ctx = htp.Context()
    x = np.random.default_rng(5).uniform(-1, 1, (16, 32)).astype(np.float32)
    pkg = ctx.compile(module.unrolled, target, tmp_path / "pkg")
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(x=x)["y"], reference(x), rtol=1e-4, atol=1e-4)
    if target == "aie-npu1":
        [cc] = (tmp_path / "pkg").rglob("kernels/unrolled.cc")
        runs = cc.read_text().count("__attribute__((noinline))")
        assert runs == -(-307 // 32) + -(-70 // 32), runs  # x0, t0..t3, the 300, the loop, the store; its 70
