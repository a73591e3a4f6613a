"""Workload tensor dimensions written as integer expressions of literals and captured constants
(`Tensor[2 * R, N, f32]`), as kernel dimensions already accept them: compiled and run on both simulator
targets against NumPy; an expression that is not positive is diagnosed at its span."""
import re
import warnings

import numpy as np
import pytest

import htp
from htp.dialects.tile import In, InOut, Out, Scalar, Tensor, add, adds, f32, i8, i32, kernel, load, muls, store
from htp.dialects.wsp import P, workload

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_expression_dimensions_compile_and_run": [
        ("workload dimension as an expression", "pto-a2a3sim"), ("workload dimension as an expression", "aie-npu1")],
}

R, N = 16, 32


@kernel
def add_rows(x: In[Tensor[R, N, f32]], y: In[Tensor[R, N, f32]], z: Out[Tensor[R, N, f32]]):
    store(z, add(load(x), load(y)))


@workload
def twice(A: In[Tensor[2 * R, N, f32]], B: In[Tensor[R + R, N, f32]], C: Out[Tensor[(4 * R) // 2, N, f32]]):
    for i in P(2):
        add_rows[i](A.tile(i, 0), B.tile(i, 0), C.tile(i, 0))


@workload
def empty(A: In[Tensor[R - R, N, f32]], C: Out[Tensor[R, N, f32]]):
    for i in P(1):
        add_rows[i](A, A, C)


@pytest.fixture(scope="module")
def ctx():
    return htp.Context()


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_expression_dimensions_compile_and_run(ctx, tmp_path, target):
    pkg = ctx.compile(twice, target=target, out=tmp_path / "pkg")
    (entry,) = pkg.entrypoints
    assert [p["shape"] for p in entry["params"]] == [[2 * R, N]] * 3
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((2 * R, N), dtype=np.float32) for _ in range(2))
    r = htp.bind(pkg, ctx).run(A=a, B=b, cache_dir=tmp_path / "cache")
    np.testing.assert_array_equal(r["C"], a + b)


def test_a_dimension_that_is_not_positive_is_diagnosed_at_its_span(ctx, tmp_path):
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(empty, target="pto-a2a3sim", out=tmp_path / "pkg")
    d = e.value.errors[0]
    assert d.code == "wsp.type" and "a tensor dimension must be positive, got 0" in d.message
    with open(__file__, encoding="utf-8") as f:
        assert "R - R" in f.read().splitlines()[d.span["line"] - 1][d.span["col"]:]


# A workload launching another (wsp.md, stitching): the package has both as entry points, and run() without
# a name said "choose one with --entry", the CLI's option, from Python.
from htp.dialects.wsp import sequential  # noqa: E402


@kernel
def scale_add(x: InOut[Tensor[8, 32, f32]], a: Scalar[f32], b: Scalar[f32]):
    store(x, adds(muls(load(x), a), b))


@workload
def affine_rows(X: InOut[Tensor["R", 32, f32]], n: int, a: float, b: float):
    for r in P(n):
        scale_add[r](X[r * 8:r * 8 + 8, :], a, b)


@workload
def apply_twice(A: InOut[Tensor[48, 32, f32]], s: float):
    with sequential():
        affine_rows(A, 6, s, 0.0)
        affine_rows(A, 6, 1.0, 2.5)


def test_a_package_of_two_entry_points_runs_the_one_named(tmp_path):
    ctx = htp.Context()
    pkg = ctx.compile(apply_twice, "pto-a2a3sim", tmp_path / "pkg")
    assert sorted(e["name"] for e in pkg.entrypoints) == ["affine_rows", "apply_twice"]
    A = np.random.default_rng(29).standard_normal((48, 32)).astype(np.float32)
    with pytest.raises(htp.RunError, match=r"several entrypoints \(.*\); name the one to run: run\('apply_twice'"):
        htp.bind(pkg, ctx).run(A=A.copy(), s=3.0)
    np.testing.assert_allclose(htp.bind(pkg, ctx).run("apply_twice", A=A.copy(), s=3.0)["A"], A * 3 + 2.5, rtol=1e-6)


# stream_by's key reads a loop variable; a launch outside that loop (after it) was given the key anyway and
# pto-a2a3sim's orchestration failed to build ('v_i' was not declared in this scope). Such a task goes on
# stream 0; aie-npu1 ignores streams.
from htp.dialects.wsp import schedule, stream_by, streams  # noqa: E402


@kernel
def bump(y: InOut[Tensor[8, 32, f32]]):
    store(y, adds(load(y), 1.0))


@workload
def bump_rows(Y: InOut[Tensor[32, 32, f32]]):
    for i in P(3):
        bump[i](Y.tile(i, 0))
    bump(Y.tile(3, 0))


@schedule(bump_rows)
def bump_rows_streams():
    streams(2)
    stream_by(lambda i: i % 2)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_stream_by_with_a_launch_outside_its_loop(tmp_path, target):
    ctx = htp.Context()
    Y = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    r = htp.bind(ctx.compile([bump_rows, bump_rows_streams], target, tmp_path / "p"), ctx).run(Y=Y.copy())
    np.testing.assert_array_equal(r["Y"], Y + 1)


# A float workload scalar given to a kernel's integer Scalar compiled and then differed per target (pto-a2a3sim
# truncated 2.7 to 2, aie-npu1 refused it at run time): it is wsp.argument at the launch.
from htp.dialects.tile import Scalar, full, i32  # noqa: E402


@kernel
def fill_int(y: Out[Tensor[1, 8, f32]], s: Scalar[i32]):
    store(y, full((1, 8), s))


@workload
def fill_from_float(Y: Out[Tensor[1, 8, f32]], a: float):
    fill_int(Y, a)


@workload
def fill_from_literal(Y: Out[Tensor[1, 8, f32]], n: int):
    fill_int(Y, n + 0.5)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_float_given_to_an_integer_kernel_scalar_is_an_error_at_the_launch(tmp_path, target):
    ctx = htp.Context()
    for fn, what in ((fill_from_float, "'a'"), (fill_from_literal, "0.5")):
        with pytest.raises(htp.CompileError, match=rf"parameter 's' of kernel 'fill_int' is Scalar\[i32\], but the "
                                                   rf"value passed reads {what}, a float.*\[wsp.argument\]") as e:
            ctx.compile(fn, target, tmp_path / fn.__name__)
        assert e.value.errors[0].span["line"] > 0


# Schedule arguments out of range named the value ("got 0"), not its node type ("got a constant").
from htp.dialects.wsp import pipeline, round_robin, dispatch, tile  # noqa: E402


@workload
def bumped(Y: InOut[Tensor[32, 32, f32]]):
    for i in P(4):
        bump[i](Y.tile(i, 0))


@schedule(bumped)
def tiled_by_zero():
    tile("i", 0)


@schedule(bumped)
def negative_round_robin():
    dispatch(round_robin(-2))


def test_schedule_arguments_out_of_range_are_named_by_value(tmp_path):
    ctx = htp.Context()
    for s, text in ((tiled_by_zero, "the tile factor must be a positive int, got 0"),
                    (negative_round_robin, "must be a positive int, got -2")):
        with pytest.raises(htp.CompileError, match=re.escape(text)):
            ctx.compile([bumped, s], "pto-a2a3sim", tmp_path / s.__name__)


# A kernel nothing launches, compiled beside a workload, is an entry of its own on both targets: pto-a2a3sim kept only
# the workload (aie-npu1 had both).
from htp.dialects.tile import exp, matmul  # noqa: E402


@kernel
def lone_matmul(A: In[Tensor[32, 32, f32]], B: In[Tensor[32, 32, f32]], C: Out[Tensor[32, 32, f32]]):
    store(C, matmul(load(A), load(B)))


@kernel
def exp_rows(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]]):
    store(y, exp(load(x)))


@workload
def exp_all(X: In[Tensor[32, 32, f32]], Y: Out[Tensor[32, 32, f32]]):
    for i in P(2):
        exp_rows[i](X.tile(i, 0), Y.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_kernel_nothing_launches_is_an_entry_beside_a_workload(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile([lone_matmul, exp_all], target, tmp_path / "p")
    assert sorted(e["name"] for e in pkg.manifest["entrypoints"]) == ["exp_all", "lone_matmul"]
    A = np.random.default_rng(3).standard_normal((32, 32)).astype(np.float32)
    bound = htp.bind(pkg, ctx)
    np.testing.assert_allclose(bound.run("lone_matmul", A=A, B=A)["C"], A @ A, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(bound.run("exp_all", X=A)["Y"], np.exp(A), rtol=1e-5)


# A workload's int (64 bits) given to a kernel's Scalar[i32] wrapped silently at run time on both targets
# (2**31 + 3 became -2147483645); it is now a run error naming the scalar and the kernel.
@workload
def fill_from_int(Y: Out[Tensor[1, 8, f32]], n: int):
    fill_int(Y, n)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_workload_int_out_of_a_kernel_scalars_range_is_a_run_error(tmp_path, target):
    ctx = htp.Context()
    bound = htp.bind(ctx.compile(fill_from_int, target, tmp_path / "p"), ctx)
    np.testing.assert_array_equal(bound.run(n=-7)["Y"], np.full((1, 8), -7, np.float32))
    with pytest.raises(htp.RunError, match=r"scalar 's' of kernel 'fill_int' \(i32\): runtime data: 2147483651 is "
                                           r"outside \[-2147483648, 2147483647\]"):
        bound.run(n=2**31 + 3)


# tile(axis, f) that backend-pto cannot group (a remainder on a loop's first variable) was pto.schedule-tile, an
# error, although a schedule does not change what a program computes and aie-npu1 ran it: the iterations now run
# one per task, with a warning naming the directive and why.



@kernel
def plus_one(x: In[Tensor[8, 16, f32]], y: Out[Tensor[8, 16, f32]]):
    store(y, adds(load(x), 1.0))


@workload
def grid_plus_one(X: In[Tensor[40, 96, f32]], Y: Out[Tensor[40, 96, f32]]):
    for i, j in P(5, 6):
        plus_one[i, j](X.tile(i, j), Y.tile(i, j))


@schedule(grid_plus_one)
def tile_first_axis():
    tile("i", 2)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_tiling_the_backend_cannot_group_runs_untiled(tmp_path, target):
    ctx = htp.Context()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pkg = ctx.compile([grid_plus_one, tile_first_axis], target, tmp_path / "p")
    texts = [str(w.message) for w in caught if issubclass(w.category, htp.CompileWarning)]
    if target == "pto-a2a3sim":
        assert any("tile(\"i\", 2) of workload 'grid_plus_one' is not applied by backend-pto: axis 'i' has extent 5"
                   in t and "its iterations run one per task" in t for t in texts), texts
    X = np.random.default_rng(8).standard_normal((40, 96)).astype(np.float32)
    np.testing.assert_array_equal(htp.bind(pkg, ctx).run(X=X)["Y"], X + np.float32(1))


# Dialect names imported under other names (`max as tmax`, to keep Python's max; `tile as tile_axis`) were errors:
# "'tmax' is not a tile intrinsic", "got a call of 'tile_axis'". The capture now reads them as the dialect's names.
from htp.dialects.tile import Tensor as TT  # noqa: E402
from htp.dialects.tile import max as tmax  # noqa: E402
from htp.dialects.wsp import P as Par  # noqa: E402
from htp.dialects.wsp import tile as tile_axis  # noqa: E402
from htp.dialects.wsp import workload as wl  # noqa: E402


@kernel
def aliased_max(x: In[TT[8, 16, f32]], y: In[TT[8, 16, f32]], z: Out[TT[8, 16, f32]], s: Scalar[f32]):
    store(z, adds(tmax(load(x), load(y)), max(s, 0.5)))


@wl
def aliased_rows(X: In[TT[32, 16, f32]], Y: In[TT[32, 16, f32]], Z: Out[TT[32, 16, f32]], s: float):
    for i in Par(4):
        aliased_max[i](X.tile(i, 0), Y.tile(i, 0), Z.tile(i, 0), s)


@schedule(aliased_rows)
def aliased_schedule():
    tile_axis("i", 2)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_dialect_names_imported_under_other_names(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(12)
    X, Y = (rng.standard_normal((32, 16)).astype(np.float32) for _ in range(2))
    pkg = ctx.compile([aliased_rows, aliased_schedule], target, tmp_path / "p")
    r = htp.bind(pkg, ctx).run(X=X, Y=Y, s=0.25)
    np.testing.assert_allclose(r["Z"], np.maximum(X, Y) + 0.5, rtol=1e-6)


# A type alias (`Row = Tensor[32, 64, f32]`) and a string annotation (`x: 'In[Tensor[32, 64, f32]]'`) were
# "unknown type annotation" plus errors that followed from it; the capture reads them as what they spell.
Row = TT[32, 64, f32]


@kernel
def copy_aliased(x: In[Row], z: Out[Row]):
    store(z, load(x))


@kernel
def copy_string_annotated(x: "In[Tensor[32, 64, f32]]", z: "Out[Tensor[32, 64, f32]]"):
    store(z, load(x))


@pytest.mark.parametrize("fn", [copy_aliased, copy_string_annotated], ids=["alias", "string"])
def test_type_aliases_and_string_annotations(tmp_path, fn):
    ctx = htp.Context()
    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    np.testing.assert_array_equal(htp.bind(ctx.compile(fn, "pto-a2a3sim", tmp_path / "p"), ctx).run(x=x)["z"], x)


# Workload messages in Python's terms: `2 ** k` said operator 'Pow'; rebinding a local (`s = s + i`, which would not
# accumulate: a local names its expression) said "'s' is a parameter or loop variable".
@workload
def pow_extent(X: InOut[Tensor[32, 32, f32]], k: int):
    for i in P(2 ** k):
        bump[i](X.tile(i, 0))


@workload
def rebound_local(X: InOut[Tensor[32, 32, f32]]):
    s = 0
    for i in P(4):
        s = s + i
        bump[s](X.tile(i, 0))


def test_workload_messages_use_python_terms(tmp_path):
    ctx = htp.Context()
    for fn, text in ((pow_extent, "operator '**' is not supported in workload expressions"),
                     (rebound_local, "'s' is already bound to a value; a workload local is bound once")):
        with pytest.raises(htp.CompileError, match=re.escape(text)):
            ctx.compile(fn, "pto-a2a3sim", tmp_path / fn.__name__)


# Two loops over a variable of one name, tiled with a remainder (tile("k", 2) over 5 iterations): each declared
# the extent v_k__extent in one scope, and the pto orchestration failed to compile at run time ("redeclaration
# of 'const int64_t v_k__extent'"). aie-npu1 ran it.
from htp.dialects.wsp import schedule, tile  # noqa: E402


@kernel
def k_acc(x: In[Tensor[8, 32, f32]], acc: InOut[Tensor[8, 32, f32]], s: Scalar[f32]):
    store(acc, add(load(acc), muls(load(x), s)))


@workload
def two_loops(X: In[Tensor[40, 32, f32]], A: InOut[Tensor[8, 32, f32]]):
    for k in P.seq(5):
        k_acc[k](X.tile(k, 0), A, k + 1)
    for k in P.seq(5):
        k_acc[k](X.tile(k, 0), A, 1)


@schedule(two_loops)
def two_loops_tiled():
    tile("k", 2)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_two_loops_of_one_variable_tiled_with_a_remainder_run(tmp_path, target):
    X = np.random.default_rng(0).standard_normal((40, 32), dtype=np.float32)
    ctx = htp.Context()
    pkg = ctx.compile([two_loops, two_loops_tiled], target=target, out=tmp_path / "pkg")
    got = htp.bind(pkg, ctx).run(X=X, A=np.zeros((8, 32), np.float32))["A"]
    np.testing.assert_allclose(got, sum(X[8 * k:8 * k + 8] * (k + 2) for k in range(5)), rtol=1e-5, atol=1e-5)


# A read-only array for an InOut argument was advised to be left out, which then failed ("missing input"): an
# InOut argument is read as well as written.
def test_a_read_only_inout_argument_is_advised_a_writable_copy(tmp_path):
    ctx = htp.Context()
    pkg = ctx.compile(k_acc, target="pto-a2a3sim", out=tmp_path / "pkg")
    acc = np.zeros((8, 32), np.float32)
    acc.flags.writeable = False
    with pytest.raises(htp.ArgumentValueError) as e:
        htp.bind(pkg, ctx).run(x=np.ones((8, 32), np.float32), acc=acc, s=1.0)
    assert "pass a writable copy (acc.copy())" in str(e.value) and "leave it out" not in str(e.value), str(e.value)


# pipeline(n) on a workload without a sequential loop compiled silently (pto warns when it ignores tile).
from htp.dialects.wsp import pipeline  # noqa: E402


@workload
def parallel_only(X: In[Tensor[40, 32, f32]], A: InOut[Tensor[40, 32, f32]]):
    for k in P(5):
        k_acc[k](X.tile(k, 0), A.tile(k, 0), 1.0)


@schedule(parallel_only)
def parallel_only_pipelined():
    pipeline(2)


def test_pipeline_on_a_workload_without_a_sequential_loop_warns(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        htp.Context().compile([parallel_only, parallel_only_pipelined], "pto-a2a3sim", tmp_path / "pkg")
    texts = [str(w.message) for w in caught]
    assert any("wsp.schedule-unused" in t and "workload 'parallel_only' has none" in t for t in texts), texts


# Tiles written in reverse order: aie-npu1's spatial DMA cannot walk that view (aie.dma-pattern) and it refused
# the workload, though pto-a2a3sim ran it; the host orchestrates it now, gathering each task's views.
@kernel
def doubled(x: In[Tensor[8, 16, f32]], y: Out[Tensor[8, 16, f32]]):
    store(y, muls(load(x), 2.0))


@workload
def reversed_tiles(X: In[Tensor[8, 96, f32]], Y: Out[Tensor[8, 96, f32]]):
    for b in P(3):
        for s in P.seq(2):
            doubled[b, s](X.tile(0, b * 2 + s), Y.tile(0, 5 - (b * 2 + s)))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_tiles_written_in_reverse_order_run_on_both_targets(tmp_path, target):
    X = np.random.default_rng(3).standard_normal((8, 96), dtype=np.float32)
    ctx = htp.Context()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pkg = ctx.compile(reversed_tiles, target=target, out=tmp_path / "pkg")
    got = htp.bind(pkg, ctx).run(X=X)["Y"]
    np.testing.assert_array_equal(got, np.concatenate([X[:, 16 * j:16 * j + 16] for j in range(5, -1, -1)], 1) * 2)


# A workload with an intermediate launched twice (a layer called once per layer of a model): the second launch
# declared the intermediate again ("intermediate 't' redeclares a name of the workload"), on both targets. Each
# launch's intermediate is its own now, under another name when the first has taken it.
@kernel
def twice_each(a: In[Tensor[16, 64, f32]], c: Out[Tensor[16, 64, f32]]):
    store(c, muls(load(a), 2.0))


@kernel
def copied_each(a: In[Tensor[16, 64, f32]], c: Out[Tensor[16, 64, f32]]):
    store(c, load(a))


@workload
def double_rows(X: InOut[Tensor[32, 64, f32]]):
    t: Tensor[32, 64, f32]
    for i in P(2):
        twice_each[i](X.tile(i, 0), t.tile(i, 0))
    for i in P(2):
        copied_each[i](t.tile(i, 0), X.tile(i, 0))


@workload
def two_layers(X: InOut[Tensor[32, 64, f32]]):
    t: Tensor[32, 64, f32]                          # the caller's own t, besides the layers'
    double_rows(X)
    double_rows(X)
    for i in P(2):
        copied_each[i](X.tile(i, 0), t.tile(i, 0))
    for i in P(2):
        twice_each[i](t.tile(i, 0), X.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_workload_with_an_intermediate_is_launched_twice(tmp_path, target):
    x = np.random.default_rng(3).standard_normal((32, 64)).astype(np.float32)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(two_layers, target=target, out=tmp_path / "p"), ctx).run("two_layers", X=x.copy())
    np.testing.assert_array_equal(r["X"], 8 * x)


# One launch passing overlapping views of Y as an input and an output, the kernel loading the input after it
# stores the output: pto-a2a3sim ran the kernel in program order (the load saw the store), aie-npu1 moved the
# task's inputs in before its outputs out (the load saw the old rows), silently. aie refuses it now (aie.alias);
# an in-place update that loads before it stores runs on both.
@kernel
def store_then_load_alias(a: In[Tensor[32, 64, f32]], c: Out[Tensor[16, 64, f32]], d: Out[Tensor[16, 64, f32]]):
    store(c, muls(load(a[16:32, :]), 2.0))
    store(d, load(a[0:16, :]))


@workload
def aliased_once(Y: InOut[Tensor[32, 64, f32]], Z: Out[Tensor[16, 64, f32]]):
    store_then_load_alias(Y, Y[0:16, :], Z)


@workload
def aliased_grid(Y: InOut[Tensor[64, 64, f32]], Z: Out[Tensor[32, 64, f32]]):
    for i in P(2):
        store_then_load_alias[i](Y[32 * i:32 * i + 32, :], Y[32 * i:32 * i + 16, :], Z.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_overlapping_input_and_output_views_of_one_launch(tmp_path, target):
    y = np.concatenate([np.full((16, 64), 1.0, np.float32), np.full((16, 64), 5.0, np.float32)])
    ctx = htp.Context()
    for fn in (aliased_once, aliased_grid):
        if target == "aie-npu1":
            with pytest.raises(htp.CompileError, match=r"kernel 'store_then_load_alias' takes overlapping views of 'Y' "
                                                       r"as 'a' \(In\) and 'c' \(Out\), and loads 'a' after it stores "
                                                       r"'c'.*\[aie.alias\]"):
                ctx.compile(fn, target=target, out=tmp_path / fn.__name__)
            continue
        yy = np.concatenate([y, y]) if fn is aliased_grid else y
        r = htp.bind(ctx.compile(fn, target=target, out=tmp_path / fn.__name__), ctx).run(Y=yy.copy())
        np.testing.assert_array_equal(np.asarray(r["Z"])[:16], np.full((16, 64), 10.0, np.float32))


# The same at offsets of a loop variable, the tile passed as the input and the output (`Y.tile(i, 0)` twice):
# aie-npu1 checked only constant offsets, so a host-orchestrated loop (a runtime trip count, or a grid whose
# workload takes a scalar) loaded the old tile where pto-a2a3sim loaded the stored one, silently.
@kernel
def twice_then_read(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]], z: Out[Tensor[16, 32, f32]]):
    store(y, muls(load(x), 2.0))
    store(z, adds(load(x), 1.0))


@workload
def same_tile_in_and_out(Y: InOut[Tensor[64, 32, f32]], Z: Out[Tensor[64, 32, f32]], n: Scalar[i32]):
    for i in P.seq(n):
        twice_then_read(Y.tile(i, 0), Y.tile(i, 0), Z.tile(i, 0))


@workload
def same_tile_in_and_out_grid(Y: InOut[Tensor[64, 32, f32]], Z: Out[Tensor[64, 32, f32]], n: Scalar[i32]):
    for i in P(4):
        twice_then_read[i](Y.tile(i, 0), Y.tile(i, 0), Z.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_the_same_tile_as_input_and_output_of_one_launch(tmp_path, target):
    y = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    ctx = htp.Context()
    for fn in (same_tile_in_and_out, same_tile_in_and_out_grid):
        if target == "aie-npu1":
            with pytest.raises(htp.CompileError, match=r"kernel 'twice_then_read' takes overlapping views of 'Y' as "
                                                       r"'x' \(In\) and 'y' \(Out\), and loads 'x' after it stores "
                                                       r"'y'.*\[aie.alias\]"):
                ctx.compile(fn, target=target, out=tmp_path / fn.__name__)
            continue
        r = htp.bind(ctx.compile(fn, target=target, out=tmp_path / fn.__name__), ctx).run(Y=y.copy(), n=4)
        np.testing.assert_array_equal(r["Y"], 2 * y)
        np.testing.assert_array_equal(r["Z"], 2 * y + 1)


# The output view at an offset the host computes (a runtime shift s): the views overlap only for some s, which
# the compile cannot know. aie-npu1 moved the input in first and loaded the old rows where pto-a2a3sim loaded
# the stored ones, silently (Z differed for s = 0 and s = 8). The host checks each task's views now and stops
# the run with aie.alias at the launch; views that do not overlap (s = 16) run on both.
@workload
def shifted_output(Y: InOut[Tensor[64, 32, f32]], Z: Out[Tensor[64, 32, f32]], n: Scalar[i32], s: Scalar[i32]):
    for i in P.seq(n):
        twice_then_read(Y.tile(i, 0), Y[16 * i + s:16 * i + s + 16, :], Z.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_views_that_overlap_only_at_run_time(tmp_path, target):
    y = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    ctx = htp.Context()
    run = htp.bind(ctx.compile(shifted_output, target=target, out=tmp_path / "p"), ctx)
    r = run.run(Y=y.copy(), n=3, s=16)
    want_y, want_z = y.copy(), np.zeros_like(y)
    for i in range(3):
        want_y[16 * i + 16:16 * i + 32] = 2 * want_y[16 * i:16 * i + 16]
        want_z[16 * i:16 * i + 16] = want_y[16 * i:16 * i + 16] + 1
    np.testing.assert_array_equal(r["Y"], want_y)
    np.testing.assert_array_equal(r["Z"], want_z)
    for s in (0, 8):
        if target == "aie-npu1":
            with pytest.raises(htp.RunError, match=r"test_workload_dims.py:\d+:\d+: .*task t0: runtime data: kernel "
                                                   r"'twice_then_read' takes overlapping views of 'Y' as 'x' \(In\) and "
                                                   r"'y' \(Out\).*\[aie.alias\]"):
                run.run(Y=y.copy(), n=3, s=s)
            continue
        r = run.run(Y=y.copy(), n=3, s=s)
        want_y, want_z = y.copy(), np.zeros_like(y)
        for i in range(3):
            want_y[16 * i + s:16 * i + s + 16] = 2 * want_y[16 * i:16 * i + 16]
            want_z[16 * i:16 * i + 16] = want_y[16 * i:16 * i + 16] + 1
        np.testing.assert_array_equal(r["Y"], want_y)
        np.testing.assert_array_equal(r["Z"], want_z)


# Python's negative bounds in a launch's views (wsp.md): `X[-16:, :]` is the last 16 rows.
@kernel
def plus_one_rows(a: In[Tensor[16, 64, f32]], c: Out[Tensor[16, 64, f32]]):
    store(c, adds(load(a), 1.0))


@workload
def last_rows(X: In[Tensor[32, 64, f32]], Y: Out[Tensor[32, 64, f32]]):
    plus_one_rows(X[-16:, :], Y[:-16, :])
    plus_one_rows(X[:16, :], Y[-16:, :])


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_negative_launch_view_bounds_count_from_the_end(tmp_path, target):
    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(last_rows, target=target, out=tmp_path / "p"), ctx).run(X=x)
    np.testing.assert_array_equal(r["Y"], np.concatenate([x[16:], x[:16]]) + 1)


# A float scalar argument chosen by a condition (`scale if n > 0 else 1.5`, wsp.md §3's select): aie-npu1's host
# evaluated it as an integer and stopped ("a non-integer value 0.37"), whichever branch was taken.
@kernel
def scale_rows_by(x: In[Tensor[4, 16, f32]], s: Scalar[f32], y: Out[Tensor[4, 16, f32]]):
    store(y, muls(load(x), s))


@workload
def scale_if_positive(X: In[Tensor[16, 16, f32]], Y: Out[Tensor[16, 16, f32]], scale: float, n: int):
    for i in P(4):
        scale_rows_by[i](X.tile(i, 0), scale if n > 0 else 1.5, Y.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_float_scalar_argument_chosen_by_a_condition(tmp_path, target):
    ctx = htp.Context()
    x = np.random.default_rng(5).standard_normal((16, 16)).astype(np.float32)
    run = htp.bind(ctx.compile(scale_if_positive, target=target, out=tmp_path / "p"), ctx)
    for n, factor in ((1, 0.37), (0, 1.5)):
        np.testing.assert_array_equal(run.run(X=x, scale=0.37, n=n)["Y"], x * np.float32(factor))


# Scratch sized by a dimension a parameter binds at run time (`T: Tensor["R", 32, f32]` beside X's "R"): refused
# on both targets ("backend-pto allocates intermediates of static shape", aie.orchestration), though wsp.md
# allows symbols in a workload's tensors. Each run allocates it at the argument's size.
@kernel
def doubled_rows(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]]):
    store(y, add(load(x), load(x)))


@workload
def twice_through_scratch(X: In[Tensor["R", 32, f32]], Y: Out[Tensor["R", 32, f32]]):
    T: Tensor["R", 32, f32]
    for i in P(X.shape[0] // 16):
        doubled_rows[i](X[i * 16:i * 16 + 16, :], T[i * 16:i * 16 + 16, :])
    for i in P(X.shape[0] // 16):
        doubled_rows[i](T[i * 16:i * 16 + 16, :], Y[i * 16:i * 16 + 16, :])


@workload
def scratch_of_an_unbound_size(X: In[Tensor[32, 32, f32]], Y: Out[Tensor[32, 32, f32]]):
    T: Tensor["S", 32, f32]
    for i in P(2):
        doubled_rows[i](X.tile(i, 0), T.tile(i, 0))
    for i in P(2):
        doubled_rows[i](T.tile(i, 0), Y.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_intermediate_sized_by_a_parameters_runtime_dimension(tmp_path, target):
    ctx = htp.Context()
    run = htp.bind(ctx.compile(twice_through_scratch, target=target, out=tmp_path / "p"), ctx)
    for rows in (48, 16, 96):
        x = np.random.default_rng(rows).standard_normal((rows, 32)).astype(np.float32)
        np.testing.assert_array_equal(run.run(X=x)["Y"], 4 * x)
    # At the declaration, once: the dialect checks it before either backend (whose checks stay as guards).
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(scratch_of_an_unbound_size, target=target, out=tmp_path / "q")
    line = 1 + open(__file__).read().split('    T: Tensor["S", 32, f32]')[0].count("\n")
    assert re.fullmatch(rf".*test_workload_dims.py:{line}:\d+: error: intermediate 'T' of workload "
                        r"'scratch_of_an_unbound_size' has the dimension \"S\", which no parameter's shape binds: "
                        r"name it in a parameter's shape, or give a number \[wsp.type\]", str(e.value).strip())


# The same workload launched by another whose parameter names the dimension otherwise ("R" for the callee's "B"),
# or gives it a number: the callee's intermediate kept "B", which nothing bound in the caller (refused on both
# targets). A callee's symbol stands for the caller's dimension its parameter is bound to.
@workload
def twice_by_b(X: In[Tensor["B", 32, f32]], Y: Out[Tensor["B", 32, f32]]):
    T: Tensor["B", 32, f32]
    for i in P(X.shape[0] // 16):
        doubled_rows[i](X[i * 16:i * 16 + 16, :], T[i * 16:i * 16 + 16, :])
    for i in P(X.shape[0] // 16):
        doubled_rows[i](T[i * 16:i * 16 + 16, :], Y[i * 16:i * 16 + 16, :])


@workload
def launches_twice_by_r(A: In[Tensor["R", 32, f32]], Z: Out[Tensor["R", 32, f32]]):
    twice_by_b(A, Z)


@workload
def launches_twice_by_48(A: In[Tensor[48, 32, f32]], Z: Out[Tensor[48, 32, f32]]):
    twice_by_b(A, Z)


@workload
def launches_unbound(A: In[Tensor[32, 32, f32]], Z: Out[Tensor[32, 32, f32]]):
    scratch_of_an_unbound_size(A, Z)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_launched_workloads_symbolic_intermediate_takes_the_callers_dimension(tmp_path, target):
    ctx = htp.Context()
    for caller, sizes in ((launches_twice_by_r, (48, 16)), (launches_twice_by_48, (48,))):
        run = htp.bind(ctx.compile(caller, target=target, out=tmp_path / caller.__name__), ctx)
        for rows in sizes:
            x = np.random.default_rng(rows).standard_normal((rows, 32)).astype(np.float32)
            np.testing.assert_array_equal(run.run(caller.__name__, A=x)["Z"], 4 * x)
    # a symbol the callee's own parameters do not bind is the callee's error, at its declaration
    with pytest.raises(htp.CompileError, match=r"intermediate 'T' of workload 'scratch_of_an_unbound_size' has the "
                                               r"dimension \"S\", which no parameter's shape binds"):
        ctx.compile(launches_unbound, target=target, out=tmp_path / "q")


# `X.tile(i, 0, shape=(16, 48))` in a launch, restating the shape of the kernel parameter it binds (as a kernel
# body's tile views write it), was wsp.tile-shape with a hint to slice 64 rows; it is the same view.
@kernel
def copy_16x48(x: In[Tensor[16, 48, f32]], y: Out[Tensor[16, 48, f32]]):
    store(y, load(x))


@workload
def copy_rows_with_shape(X: In[Tensor[64, 48, f32]], Y: Out[Tensor[64, 48, f32]]):
    for i in P(4):
        copy_16x48[i](X.tile(i, 0, shape=(16, 48)), Y.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_launch_tile_may_restate_the_parameters_shape(tmp_path, target):
    ctx = htp.Context()
    x = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)
    run = htp.bind(ctx.compile(copy_rows_with_shape, target=target, out=tmp_path / "p"), ctx)
    np.testing.assert_array_equal(run.run(X=x)["Y"], x)


# An Out the caller leaves to the host, too large to allocate (a [32, 2**36] f32 is 8 TiB), raised a bare Python
# MemoryError('std::bad_alloc'); python.md promises an htp.Error for every failure the host reports. (A dim may be
# written 2**36, a constant power: it was "got an arithmetic expression".)
@kernel
def copy_8x32(x: In[Tensor[8, 32, f32]], y: Out[Tensor[8, 32, f32]]):
    store(y, load(x))


@workload
def into_a_huge_output(X: In[Tensor[8, 32, f32]], Y: Out[Tensor[2**10, 2**31, f32]]):
    for i in P(4):
        copy_8x32[i](X, Y.tile(i, 0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_output_the_host_cannot_allocate_is_a_run_error_naming_it(tmp_path, target):
    ctx = htp.Context()
    run = htp.bind(ctx.compile(into_a_huge_output, target=target, out=tmp_path / "p"), ctx)
    with pytest.raises(htp.RunError, match=r"cannot allocate output 'Y' \(f32\[1024, 2147483648\], 8796093022208 "
                                           r"bytes\): out of host memory; pass an array of your own for it"):
        run.run(X=np.ones((8, 32), np.float32))


# A workload intermediate too large for the host (32 TiB) stopped the run with "std::bad_alloc" and nothing else:
# on pto-a2a3sim "<orchestration file>: std::bad_alloc", on aie-npu1 "uncaught exception: std::bad_alloc". The
# run error now says which tensor (on pto, which shape), and its size. A dimension past 2**32 - 1, which
# pto-runtime's tensors cannot hold, was truncated ("ChipTensor::view: dimension 1 out of range" at run time); it
# is a compile error on pto now.
@workload
def through_a_huge_intermediate(X: In[Tensor[8, 32, f32]], Y: Out[Tensor[8, 32, f32]]):
    T: Tensor[2**20, 2**23, f32]
    copy_8x32[0](X, T.tile(0, 0))
    copy_8x32[1](T.tile(0, 0), Y)


@workload
def through_a_long_intermediate(X: In[Tensor[8, 32, f32]], Y: Out[Tensor[8, 32, f32]]):
    T: Tensor[8, 2**33, f32]
    copy_8x32[0](X, T.tile(0, 0))
    copy_8x32[1](T.tile(0, 0), Y)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_intermediate_the_host_cannot_allocate_is_a_run_error_naming_it(tmp_path, target):
    ctx = htp.Context()
    run = htp.bind(ctx.compile(through_a_huge_intermediate, target=target, out=tmp_path / "p"), ctx)
    with pytest.raises(htp.RunError) as e:
        run.run(X=np.ones((8, 32), np.float32))
    message = str(e.value)
    if target == "aie-npu1":
        assert "intermediate 'T' of workload 'through_a_huge_intermediate' (1048576 x 8388608 x f32, 35184372088832 " \
               "bytes) cannot be allocated: out of host memory" in message, message
        return
    assert "alloc_tensors: a runtime-owned tensor of 1048576 x 8388608 elements (35184372088832 bytes: a workload " \
           "intermediate or a channel's ring) cannot be allocated: out of host memory" in message, message
    with pytest.raises(htp.CompileError, match=r"intermediate 'T' of 'through_a_long_intermediate' has the dimension "
                                               r"8589934592, past the 4294967295 elements pto-runtime's tensors take"):
        ctx.compile(through_a_long_intermediate, target=target, out=tmp_path / "long")


# A tensor parameter's dimension past 2**32 - 1 was truncated to pto-runtime's uint32 extents: a static one
# silently (the kernel then read the wrong tensor shape), one a run binds through a symbol at the binding. The
# static one is a compile error on pto now, as it is for intermediates, and the bound one a run error naming
# the argument. (aie-npu1 takes 64-bit extents; these shapes are pto's limit.)
@kernel
def copy_1x32_i8(x: In[Tensor[1, 32, i8]], y: Out[Tensor[1, 32, i8]]):
    store(y.tile(0, 0, shape=(1, 32)), load(x.tile(0, 0, shape=(1, 32))))


@workload
def from_a_long_parameter(X: In[Tensor[1, 2**33, i8]], Y: Out[Tensor[1, 32, i8]]):
    copy_1x32_i8[0](X.tile(0, 0), Y)


@workload
def from_a_parameter_of_any_length(X: In[Tensor[1, "N", i8]], Y: Out[Tensor[1, 32, i8]]):
    copy_1x32_i8[0](X.tile(0, 0), Y)


def test_a_parameter_dimension_past_pto_runtimes_extents_is_refused_on_pto(tmp_path):
    ctx = htp.Context()
    with pytest.raises(htp.CompileError, match=r"parameter 'X' of 'from_a_long_parameter' has the dimension "
                                               r"8589934592, past the 4294967295 elements pto-runtime's tensors take"):
        ctx.compile(from_a_long_parameter, target="pto-a2a3sim", out=tmp_path / "long")
    run = htp.bind(ctx.compile(from_a_parameter_of_any_length, target="pto-a2a3sim", out=tmp_path / "any"), ctx)
    x = np.arange(64, dtype=np.int8).reshape(1, 64)
    assert np.array_equal(run.run(X=x)["Y"], x[:, :32])
    # np.zeros takes the memory from the system lazily: nothing here touches the 4 GiB
    with pytest.raises(htp.RunError, match=r"argument 'X' has 4294967297 elements in dimension 1, past the "
                                           r"4294967295 pto-runtime's tensors take per dimension"):
        run.run(X=np.zeros((1, 2**32 + 1), np.int8))
