"""The collectives of a mapped kernel's body (docs/dialects/layout-axe.md: allreduce, allgather, reduce_scatter,
relayout) run on both simulator targets: layout-axe's pass axe.lower cuts the kernel at each collective into
parts that exchange their values through global memory, and each backend runs the parts as the mapped
kernels of a workload. Each program is written as the layout-axe doc teaches, checked against NumPy."""
from __future__ import annotations

import json

import numpy as np
import pytest

import htp
from htp.dialects.layout import Layout, allgather, allreduce, reduce_scatter, relayout
from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, matmul, rowexpand_div, rowmax, rowsum, store

TARGETS = ["pto-a2a3sim", "aie-npu1"]

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    test: [(c, t) for c in ["collectives in a kernel (`allreduce`, `allgather`, `reduce_scatter`, `relayout`)"]
           for t in ["pto-a2a3sim", "aie-npu1"]]
    for test in ["test_the_first_program_of_the_layout_doc_runs", "test_each_collective_runs"]
}


# docs/dialects/layout-axe.md's first program, as written there.
@kernel(mapping=[2, 2])
def gemm_rownorm(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")],
                 B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                 C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")],
                 N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    c = matmul(load(A), load(B))
    store(C, c)
    partial = rowsum(c)
    store(N, allreduce(partial, axis=1))


# The same rows normalised: `c` is computed before the allreduce and divided after it.
@kernel(mapping=[2, 2])
def row_normalised(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                   C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")]):
    c = matmul(load(A), load(B))
    total = allreduce(rowsum(c), axis=1)
    store(C, rowexpand_div(c, total))


# K split over two cores: each core's product owes a sum over mesh.x.
@kernel(mapping=[2])
def gemm_k_split_allreduce(A: In[Tensor[32, 64, f32] @ Layout("RS(0)")], B: In[Tensor[64, 32, f32] @ Layout("S(0)R")],
                           C: Out[Tensor[32, 32, f32] @ Layout("RR")]):
    store(C, allreduce(matmul(load(A), load(B)), axis=0))


@kernel(mapping=[2])
def gemm_k_split_scatter(A: In[Tensor[32, 64, f32] @ Layout("RS(0)")], B: In[Tensor[64, 32, f32] @ Layout("S(0)R")],
                         C: Out[Tensor[32, 32, f32] @ Layout("S(0)R")]):
    store(C, reduce_scatter(matmul(load(A), load(B)), dim=0, axis=0))


@kernel(mapping=[2])
def row_max(X: In[Tensor[64, 64, f32] @ Layout("RS(0)")], M: Out[Tensor[64, 1, f32] @ Layout("RR")]):
    store(M, allreduce(rowmax(load(X)), axis=0, op="max"))


@kernel(mapping=[2])
def gather_rows(X: In[Tensor[64, 32, f32] @ Layout("S(0)R")], Y: Out[Tensor[64, 32, f32] @ Layout("RR")]):
    store(Y, allgather(load(X), dim=0))


@kernel(mapping=[2])
def rows_to_columns(X: In[Tensor[64, 64, f32] @ Layout("S(0)R")], Y: Out[Tensor[64, 64, f32] @ Layout("RS(0)")]):
    store(Y, relayout(load(X), to=Layout("RS(0)")))


def _run(ctx, fn, target, path, **inputs):
    pkg = ctx.compile(fn, target, path)
    return pkg, htp.bind(pkg, ctx).run(**inputs)


@pytest.mark.parametrize("target", TARGETS)
def test_the_first_program_of_the_layout_doc_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(11)
    A, B = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(2))
    pkg, r = _run(ctx, gemm_rownorm, target, tmp_path / "doc", A=A, B=B)
    np.testing.assert_allclose(r["C"], A @ B, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(r["N"], (A @ B).sum(1, keepdims=True), rtol=1e-4, atol=1e-2)
    # The entry keeps the kernel's name and parameters; it runs the parts the collective cut it into.
    [entry] = pkg.entrypoints
    assert entry["name"] == "gemm_rownorm" and [p["name"] for p in entry["params"]] == ["A", "B", "C", "N"]
    A2 = np.abs(rng.standard_normal((64, 64), dtype=np.float32)) + 0.5
    B2 = np.abs(rng.standard_normal((64, 64), dtype=np.float32)) + 0.5
    _, r = _run(ctx, row_normalised, target, tmp_path / "norm", A=A2, B=B2)
    P = A2 @ B2
    np.testing.assert_allclose(r["C"], P / P.sum(1, keepdims=True), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_each_collective_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(12)
    A = rng.standard_normal((32, 64), dtype=np.float32)
    B = rng.standard_normal((64, 32), dtype=np.float32)
    X = rng.standard_normal((64, 64), dtype=np.float32)
    _, r = _run(ctx, gemm_k_split_allreduce, target, tmp_path / "allreduce", A=A, B=B)
    np.testing.assert_allclose(r["C"], A @ B, rtol=1e-4, atol=1e-3)
    _, r = _run(ctx, gemm_k_split_scatter, target, tmp_path / "scatter", A=A, B=B)
    np.testing.assert_allclose(r["C"], A @ B, rtol=1e-4, atol=1e-3)
    _, r = _run(ctx, row_max, target, tmp_path / "max", X=X)
    np.testing.assert_array_equal(r["M"], X.max(1, keepdims=True))
    G = rng.standard_normal((64, 32), dtype=np.float32)
    _, r = _run(ctx, gather_rows, target, tmp_path / "gather", X=G)
    np.testing.assert_array_equal(r["Y"], G)
    _, r = _run(ctx, rows_to_columns, target, tmp_path / "relayout", X=X)
    np.testing.assert_array_equal(r["Y"], X)


def test_the_kernel_is_cut_into_parts_that_exchange_through_global_memory(tmp_path):
    ctx = htp.Context()
    pkg = ctx.compile(gemm_rownorm, "pto-a2a3sim", tmp_path / "pkg", dump_ir="all")
    [lowered] = [p for p in sorted((pkg.path / "ir").glob("*axe.lower.ast.json"))]
    attrs = json.loads(lowered.read_text())["attrs"]
    kernels = {k["name"]: k for k in attrs["tile.kernels"]["kernels"]}
    assert sorted(kernels) == ["gemm_rownorm__0", "gemm_rownorm__1"]
    # Part 0 stores each core's partial row sums into its own slot; part 1 reads both slots of its mesh row.
    signatures = attrs["layout.signatures"]["functions"]
    slot_out = signatures["gemm_rownorm__0"]["params"]["x_c0_partial"]
    slot_in = signatures["gemm_rownorm__1"]["params"]["x_c0_partial"]
    assert (slot_out["text"], slot_out["shape"], slot_out["local_shape"]) == ("S(0)S(1)", [64, 2], [32, 1])
    assert (slot_in["text"], slot_in["local_shape"]) == ("S(0)R", [32, 2])
    [workload] = attrs["wsp.task_graph"]["workloads"]
    assert workload["name"] == "gemm_rownorm"
    assert [i["name"] for i in workload["intermediates"]] == ["_gemm_rownorm_c0_partial"]
    [group] = workload["body"]
    assert group["order"] == "ordered" and [t["kernel"] for t in group["body"]] == ["gemm_rownorm__0", "gemm_rownorm__1"]


@kernel(mapping=[2])
def collective_in_a_loop(X: In[Tensor[64, 64, f32] @ Layout("RS(0)")], M: Out[Tensor[64, 1, f32] @ Layout("RR")]):
    m = rowmax(load(X))
    for i in range(2):
        m = allreduce(rowmax(load(X)), axis=0, op="max")
    store(M, m)


@pytest.mark.parametrize("target", TARGETS)
def test_a_collective_inside_a_loop_is_a_located_error(tmp_path, target):
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(collective_in_a_loop, target, tmp_path / "pkg")
    [error] = e.value.errors
    assert error.code == "layout.lower" and "inside a 'for' statement" in error.message, error
    assert error.span["line"] > 0


# Two collectives (three parts): `p` is computed in the first part and read by both later ones; a runtime
# scalar reaches every part.
from htp.dialects.tile import Scalar, muls  # noqa: E402


@kernel(mapping=[2, 2])
def two_collectives(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                    scale: Scalar[f32], C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")],
                    M: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    p = matmul(load(A), load(B))
    s = allreduce(rowsum(p), axis=1)
    m = allreduce(rowmax(p), axis=1, op="max")
    store(C, muls(rowexpand_div(p, s), scale))
    store(M, m)


@pytest.mark.parametrize("target", TARGETS)
def test_two_collectives_and_a_scalar_run(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(13)
    A = rng.uniform(0.5, 1.5, (64, 64)).astype(np.float32)
    B = rng.uniform(0.5, 1.5, (64, 64)).astype(np.float32)
    pkg, r = _run(ctx, two_collectives, target, tmp_path / "pkg", A=A, B=B, scale=3.0)
    P = A.astype(np.float64) @ B
    np.testing.assert_allclose(r["C"], 3.0 * P / P.sum(1, keepdims=True), rtol=1e-4)
    np.testing.assert_allclose(r["M"], P.max(1, keepdims=True), rtol=1e-5)


# The second allreduce's operand `s` is computed before the first one: the part that stores it for the
# exchange gets it handed on from the part that computed it.
@kernel(mapping=[2, 2])
def operand_from_two_parts_back(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                                N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")], M: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    p = matmul(load(A), load(B))
    s = rowsum(p)
    m = allreduce(rowmax(p), axis=1, op="max")
    t = allreduce(s, axis=1)
    store(N, t)
    store(M, m)


@pytest.mark.parametrize("target", TARGETS)
def test_an_operand_computed_two_parts_earlier_is_handed_on(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(14)
    A, B = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(2))
    _, r = _run(ctx, operand_from_two_parts_back, target, tmp_path / "pkg", A=A, B=B)
    P = A.astype(np.float64) @ B
    np.testing.assert_allclose(r["N"], P.sum(1, keepdims=True), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(r["M"], P.max(1, keepdims=True), rtol=1e-5)


# A kernel with a collective launched by a workload (not compiled as the entry), followed by another launch
# that reads what it wrote; the collective's result overwrites its own operand's register. The second kernel
# is named like a C++ keyword, which backend-aie's kernel sources used as the function's name (they did not
# compile); its symbol is htp_double.

from htp.dialects.wsp import workload  # noqa: E402


@kernel(mapping=[2, 2])
def block_row_sums(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                   N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    s = rowsum(matmul(load(A), load(B)))
    s = allreduce(s, axis=1)
    store(N, s)


@kernel
def double(X: In[Tensor[64, 1, f32]], Y: Out[Tensor[64, 1, f32]]):
    store(Y, muls(load(X), 2.0))


@workload
def sums_then_double(A: In[Tensor[64, 64, f32]], B: In[Tensor[64, 64, f32]], Y: Out[Tensor[64, 1, f32]]):
    N: Tensor[64, 1, f32]
    block_row_sums(A, B, N)
    double(N, Y)


@pytest.mark.parametrize("target", TARGETS)
def test_a_workload_launches_a_kernel_with_a_collective(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(15)
    A, B = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(2))
    pkg, r = _run(ctx, sums_then_double, target, tmp_path / "pkg", A=A, B=B)
    np.testing.assert_allclose(r["Y"], 2 * (A.astype(np.float64) @ B).sum(1, keepdims=True), rtol=1e-4, atol=1e-3)
    if target == "aie-npu1":
        mlir = (pkg.path / "codegen/aie/sums_then_double/tasks/double/aie.mlir").read_text()
        assert "func.func private @htp_double_packed(" in mlir, mlir


# On a 2 x 2 mesh: a gather along the second mesh axis, a K-split GEMM scattered over it, and a relayout that
# swaps which mesh axis shards which dimension.
@kernel(mapping=[2, 2])
def gather_cols(X: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")], Y: Out[Tensor[64, 64, f32] @ Layout("S(0)R")]):
    store(Y, allgather(load(X), dim=1))


@kernel(mapping=[2, 2])
def ksplit_scatter(A: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")], B: In[Tensor[64, 64, f32] @ Layout("S(1)R")],
                   C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")]):
    store(C, reduce_scatter(matmul(load(A), load(B)), dim=1, axis=1))


@kernel(mapping=[2, 2])
def swap_mesh_axes(X: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")], Y: Out[Tensor[64, 64, f32] @ Layout("S(1)S(0)")]):
    store(Y, relayout(load(X), to=Layout("S(1)S(0)")))


@pytest.mark.parametrize("target", TARGETS)
def test_collectives_on_a_two_by_two_mesh(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(16)
    X, A, B = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(3))
    _, r = _run(ctx, gather_cols, target, tmp_path / "gather", X=X)
    np.testing.assert_array_equal(r["Y"], X)
    _, r = _run(ctx, ksplit_scatter, target, tmp_path / "scatter", A=A, B=B)
    np.testing.assert_allclose(r["C"], A @ B, rtol=1e-4, atol=1e-3)
    _, r = _run(ctx, swap_mesh_axes, target, tmp_path / "swap", X=X)
    np.testing.assert_array_equal(r["Y"], X)


# `p` is handed from the first part to the second, redefined there and handed on to the third: the second
# part reads and writes its carry tensor (an InOut parameter).
@kernel(mapping=[2, 2])
def carried_twice(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                  C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")]):
    p = matmul(load(A), load(B))
    s = allreduce(rowsum(p), axis=1)
    p = rowexpand_div(p, s)
    m = allreduce(rowmax(p), axis=1, op="max")
    store(C, rowexpand_div(p, m))


@pytest.mark.parametrize("target", TARGETS)
def test_a_register_carried_through_two_cuts(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(17)
    A = rng.uniform(0.5, 1.5, (64, 64)).astype(np.float32)
    B = rng.uniform(0.5, 1.5, (64, 64)).astype(np.float32)
    _, r = _run(ctx, carried_twice, target, tmp_path / "pkg", A=A, B=B)
    P = A.astype(np.float64) @ B
    P = P / P.sum(1, keepdims=True)
    np.testing.assert_allclose(r["C"], P / P.max(1, keepdims=True), rtol=1e-4)


# The same kernel launched twice by a workload: on Ascend its cube and vector parts' hand-off tensor is shared
# by the launches (the second's writes wait for the first's reads).
@kernel(mapping=[2, 2])
def row_sums_of_product(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                        N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    store(N, allreduce(rowsum(matmul(load(A), load(B))), axis=1))


@workload
def two_launches(A: In[Tensor[64, 64, f32]], B: In[Tensor[64, 64, f32]], C: In[Tensor[64, 64, f32]],
                 N: Out[Tensor[64, 1, f32]], M: Out[Tensor[64, 1, f32]]):
    row_sums_of_product(A, B, N)
    row_sums_of_product(C, B, M)


@pytest.mark.parametrize("target", TARGETS)
def test_a_kernel_with_a_collective_launched_twice(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(18)
    A, B, C = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(3))
    _, r = _run(ctx, two_launches, target, tmp_path / "pkg", A=A, B=B, C=C)
    np.testing.assert_allclose(r["N"], (A @ B).sum(1, keepdims=True), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(r["M"], (C @ B).sum(1, keepdims=True), rtol=1e-4, atol=1e-3)


# The same K split with 64 x 64 partials (16 KB each): the combining part reads both cores' slots (32 KB) and
# writes C; on AIE the slots it loads are blocks of the object it received and the sum is computed in C's
# object, so the core holds 48 KB plus its stack (it held a copy of each before, 82 KB: aie.validate.memory).
@kernel(mapping=[2])
def gemm_k_split_64(A: In[Tensor[64, 128, f32] @ Layout("RS(0)")], B: In[Tensor[128, 64, f32] @ Layout("S(0)R")],
                    C: Out[Tensor[64, 64, f32] @ Layout("RR")]):
    store(C, allreduce(matmul(load(A), load(B)), axis=0))


@pytest.mark.parametrize("target", TARGETS)
def test_a_k_split_allreduce_of_64x64_partials_runs(tmp_path, target):
    rng = np.random.default_rng(17)
    A = rng.standard_normal((64, 128), dtype=np.float32)
    B = rng.standard_normal((128, 64), dtype=np.float32)
    pkg, r = _run(htp.Context(), gemm_k_split_64, target, tmp_path / "ks64", A=A, B=B)
    np.testing.assert_allclose(r["C"], A @ B, rtol=1e-4, atol=1e-3)
    if target == "aie-npu1":
        source = next((pkg.path / "codegen/aie/gemm_k_split_64/tasks/gemm_k_split_64__1/kernels").glob("*.cc")).read_text()
        assert "+ 4096;  // a block of the object" in source, source


# An axis the mesh does not have: the message offered "an index 0..2" for axis=2 on a 2 x 2 mesh.
@kernel(mapping=[2, 2])
def sum_over_a_third_axis(A: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")], N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    store(N, allreduce(rowsum(load(A)), axis=2))


def test_an_axis_the_mesh_does_not_have_names_the_ones_it_has(tmp_path):
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(sum_over_a_third_axis, "pto-a2a3sim", tmp_path / "p")
    [d] = [d for d in e.value.errors if d.code == "layout.mesh-axis"]
    assert "an index 0..1 or mesh.x, mesh.y" in d.message, d.message
