"""backend-pto lowers the dist facet (issue 17): a kernel mapped over a core mesh whose tensors carry dist
layouts runs as one task per core coordinate on its shard of each tensor — the same program that backend-aie
maps onto a grid of compute cores. Checked against NumPy on both simulators, with the visible effect: the
orchestration's mesh loops and shard views, and the number of tasks."""
from __future__ import annotations

import json
import pathlib
import re
import sys

import numpy as np
import pytest

import htp

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

import gemm_layouts  # noqa: E402

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_the_spmd_gemm_with_layouts_runs_on_both_targets": [
        ("layout `dist` facet (sharding over cores)", "pto-a2a3sim"), ("layout `dist` facet (sharding over cores)", "aie-npu1")],
    "test_a_workload_launches_a_mapped_kernel_over_tiles_of_its_tensors": [
        ("mapped kernel launched by a workload", "pto-a2a3sim"), ("mapped kernel launched by a workload", "aie-npu1")],
    "test_a_mapped_kernel_mixing_cube_and_vector_work_runs_on_both_targets": [
        ("mapped kernel mixing cube and vector work", "pto-a2a3sim"),
        ("mapped kernel mixing cube and vector work", "aie-npu1")],
    "test_a_mapped_kernel_with_more_operands_than_dma_channels_runs": [
        ("mapped kernel with three inputs", "pto-a2a3sim"), ("mapped kernel with three inputs", "aie-npu1")],
    "test_the_full_axe_form_of_a_row_sharded_layout_runs_on_both_targets": [
        ("`Layout.axe` full form with local `m` iters of a row-sharded tensor", "pto-a2a3sim"),
        ("`Layout.axe` full form with local `m` iters of a row-sharded tensor", "aie-npu1")],
    "test_aie_runs_the_full_axe_form_of_a_column_sharded_layout": [
        ("`Layout.axe` full form with local `m` iters of a column-sharded tensor", "aie-npu1")],
    "test_a_replicated_output_of_a_mapped_kernel_runs_on_both_targets": [
        ("replicated output of a mapped kernel", "pto-a2a3sim"), ("replicated output of a mapped kernel", "aie-npu1")],
}


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_the_spmd_gemm_with_layouts_runs_on_both_targets(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile(gemm_layouts.gemm_spmd, target, tmp_path / "pkg")
    inputs = gemm_layouts.make_inputs(np.random.default_rng(4))
    result = htp.bind(pkg, ctx).run(**inputs)
    np.testing.assert_allclose(result["C"], inputs["A"] @ inputs["B"], rtol=1e-4, atol=1e-3)


def test_pto_runs_one_task_per_core_coordinate_on_the_shards(tmp_path):
    ctx = htp.Context()
    pkg = ctx.compile(gemm_layouts.gemm_spmd, "pto-a2a3sim", tmp_path / "pkg")
    [entry] = pkg.entrypoints
    assert [p["shape"] for p in entry["params"]] == [[64, 128], [128, 64], [64, 64]], "the entry takes whole tensors"
    orchestration = (pkg.path / "codegen/pto/kernels/orchestration/gemm_spmd.cpp").read_text()
    assert "for (int64_t v_mesh0 = 0; v_mesh0 < 2; ++v_mesh0)" in orchestration
    assert "for (int64_t v_mesh1 = 0; v_mesh1 < 2; ++v_mesh1)" in orchestration
    # A @ S(0)R: rows by mesh axis 0, whole K; B @ RS(1): columns by axis 1; C @ S(0)S(1): both.
    assert "task0_A_offset[2] = {static_cast<uint32_t>(v_mesh0 * 32), static_cast<uint32_t>(0)}" in orchestration
    assert "task0_B_offset[2] = {static_cast<uint32_t>(0), static_cast<uint32_t>(v_mesh1 * 32)}" in orchestration
    assert "task0_C_offset[2] = {static_cast<uint32_t>(v_mesh0 * 32), static_cast<uint32_t>(v_mesh1 * 32)}" in orchestration
    inputs = gemm_layouts.make_inputs(np.random.default_rng(5))
    report = htp.bind(pkg, ctx).run(**inputs).report
    assert report["tasks"] == 4


# A workload launching a mapped kernel, as docs/dialects/wsp.md and layout-axe.md let a user write it: the
# kernel's mesh runs for every launch, on the shards of the views the launch passes. backend-pto used to
# submit one task per launch on the views' first shard (75% of C left unwritten) without a word.
from htp.dialects.layout import Layout  # noqa: E402
from htp.dialects.tile import kernel, In, Out, Tensor, f32, load, store, matmul  # noqa: E402
from htp.dialects.wsp import workload, P  # noqa: E402


@kernel(mapping=[2, 2])
def block_gemm(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
               C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")]):
    store(C, matmul(load(A), load(B)))


@workload
def row_blocks(A: In[Tensor[192, 64, f32]], B: In[Tensor[64, 64, f32]], C: Out[Tensor[192, 64, f32]]):
    for i in P(3):
        block_gemm(A.tile(i, 0), B, C.tile(i, 0))


@workload
def one_launch(A: In[Tensor[64, 64, f32]], B: In[Tensor[64, 64, f32]], C: Out[Tensor[64, 64, f32]]):
    block_gemm(A, B, C)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_workload_launches_a_mapped_kernel_over_tiles_of_its_tensors(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(6)
    for fn, rows in ((row_blocks, 192), (one_launch, 64)):
        pkg = ctx.compile(fn, target, tmp_path / fn.__name__)
        A = rng.standard_normal((rows, 64), dtype=np.float32)
        B = rng.standard_normal((64, 64), dtype=np.float32)
        result = htp.bind(pkg, ctx).run(A=A, B=B)
        np.testing.assert_allclose(result["C"], A @ B, rtol=1e-4, atol=1e-3, err_msg=fn.__name__)


def test_pto_runs_a_launched_mapped_kernel_once_per_core_on_the_launch_views(tmp_path):
    ctx = htp.Context()
    pkg = ctx.compile(row_blocks, "pto-a2a3sim", tmp_path / "pkg")
    orchestration = (pkg.path / "codegen/pto/kernels/orchestration/row_blocks.cpp").read_text()
    assert "for (int64_t v_mesh1 = 0; v_mesh1 < 2; ++v_mesh1)" in orchestration
    # The launch's view (row block i, 64 rows) composed with the core's shard (32 rows at v_mesh0).
    assert re.search(r'task0_C_offset\[2\] = \{static_cast<uint32_t>\(\(htp_mul\(v_i, 64, "test_dist_layouts.py:\d+:\d+"\)\) '
                     r'\+ v_mesh0 \* 32\), static_cast<uint32_t>\(\(0\) \+ v_mesh1 \* 32\)\}', orchestration)
    rng = np.random.default_rng(7)
    A = rng.standard_normal((192, 64), dtype=np.float32)
    B = rng.standard_normal((64, 64), dtype=np.float32)
    assert htp.bind(pkg, ctx).run(A=A, B=B).report["tasks"] == 12  # 3 launches x 4 cores



from htp.dialects.wsp import schedule, tile  # noqa: E402


@workload
def tiled_blocks(A: In[Tensor[192, 64, f32]], B: In[Tensor[64, 64, f32]], C: Out[Tensor[192, 64, f32]]):
    for i in P(3):
        block_gemm(A.tile(i, 0), B, C.tile(i, 0))


@schedule(tiled_blocks)
def tiled_blocks_schedule():
    tile("i", 3)


def test_pto_refuses_to_tile_the_launches_of_a_mapped_kernel(tmp_path):
    with pytest.raises(htp.CompileError, match=r"mapped over a mesh, in a loop the schedule tiles") as e:
        htp.Context().compile([tiled_blocks, tiled_blocks_schedule], "pto-a2a3sim", tmp_path / "pkg")
    assert e.value.errors[0].code == "pto.unsupported"


# An output replicated over a mesh axis (N @ S(0)R on a 2 x 2 mesh: the cores of a row compute the same row
# sums), as layout-axe.md's first program stores N. backend-aie refused it (aie.replicated-output): now one
# core of each group sends it and the others write their copy into a buffer of their own tile.
from htp.dialects.tile import muls, rowsum  # noqa: E402


@kernel(mapping=[2, 2])
def scale_and_row_sums(X: In[Tensor[64, 64, f32] @ Layout("S(0)R")], Y: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")],
                       Z: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")], N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    store(Z, muls(load(Y), 2.0))
    store(N, rowsum(load(X)))


@kernel(mapping=[2, 2])
def block_products(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                   C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")]):
    store(C, matmul(load(A), load(B)))


@kernel(mapping=[2, 2])
def row_sums(C: In[Tensor[64, 64, f32] @ Layout("S(0)R")], N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    store(N, rowsum(load(C)))


@workload
def gemm_then_row_sums(A: In[Tensor[64, 64, f32]], B: In[Tensor[64, 64, f32]], C: Out[Tensor[64, 64, f32]],
                       N: Out[Tensor[64, 1, f32]]):
    block_products(A, B, C)
    row_sums(C, N)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_replicated_output_of_a_mapped_kernel_runs_on_both_targets(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(8)
    X, Y, A, B = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(4))
    pkg = ctx.compile(scale_and_row_sums, target, tmp_path / "entry")
    r = htp.bind(pkg, ctx).run(X=X, Y=Y)
    np.testing.assert_allclose(r["Z"], 2 * Y, rtol=1e-6)
    np.testing.assert_allclose(r["N"], X.sum(1, keepdims=True), rtol=1e-4, atol=1e-4)
    # Two mapped kernels in sequence, the second reading the first's output whole rows at a time.
    pkg = ctx.compile(gemm_then_row_sums, target, tmp_path / "workload")
    r = htp.bind(pkg, ctx).run(A=A, B=B)
    np.testing.assert_allclose(r["C"], A @ B, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(r["N"], (A @ B).sum(1, keepdims=True), rtol=1e-4, atol=1e-2)
    if target == "aie-npu1":
        mlir = (pkg.path / "codegen/aie/gemm_then_row_sums/tasks/row_sums/aie.mlir").read_text()
        assert mlir.count("= aie.buffer(") == 2, mlir  # cores (0, 1) and (1, 1) keep their copy


# A mapped kernel mixing cube and vector work (gemm_layouts.py with an exp): backend-pto refused it
# (pto.core-type, "has layouts"); its parts are now mapped kernels, each core handing its product on in its
# own tile of the hand-off tensor.
from htp.dialects.tile import exp  # noqa: E402


@kernel(mapping=[2, 2])
def gemm_exp(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
             C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")]):
    store(C, exp(matmul(load(A), load(B))))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_mapped_kernel_mixing_cube_and_vector_work_runs_on_both_targets(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(9)
    A = rng.standard_normal((64, 64), dtype=np.float32) * 0.1
    B = rng.standard_normal((64, 64), dtype=np.float32) * 0.1
    pkg = ctx.compile(gemm_exp, target, tmp_path / "pkg")
    result = htp.bind(pkg, ctx).run(A=A, B=B)
    np.testing.assert_allclose(result["C"], np.exp(A @ B), rtol=1e-4)
    if target == "pto-a2a3sim":
        assert result.report["tasks"] == 8  # a cube and a vector task per core
        assert sorted(p.name for p in (pkg.path / "codegen/pto/kernels").glob("*/gemm_exp__*.cpp")) == [
            "gemm_exp__0_aic.cpp", "gemm_exp__1_aiv.cpp"]


# Three inputs and an output per core: more than an AIE compute tile's two input DMA channels. The kernel
# entry runs host-orchestrated with each core's objects packed into its slice of one FIFO each way (it was
# aie.validate.dma-channels).
from htp.dialects.tile import add, mul  # noqa: E402


@kernel(mapping=[2, 2])
def affine(X: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")], G: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")],
           Bt: In[Tensor[64, 64, f32] @ Layout("RS(1)")], Z: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")]):
    store(Z, add(mul(load(X), load(G)), load(Bt[0:32, :])))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_mapped_kernel_with_more_operands_than_dma_channels_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(10)
    X, G, Bt = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(3))
    pkg = ctx.compile(affine, target, tmp_path / "pkg")
    result = htp.bind(pkg, ctx).run(X=X, G=G, Bt=Bt)
    np.testing.assert_allclose(result["Z"], X * G + np.tile(Bt[0:32, :], (2, 1)), rtol=1e-6)
    if target == "aie-npu1":
        doc = json.loads((pkg.path / "codegen/aie/affine/orchestration.json").read_text())
        packed = doc["kernels"]["affine"]["packed"]
        assert packed["cores"] == 4 and len(packed["in"]) == 12 and len(packed["out"]) == 4
        # Core 3 (mesh (1, 1)) reads its block of X and the second column block of Bt's first rows.
        views = {e["param"]: e["view"] for e in packed["in"] if e["core"] == 3}
        assert views["X"] == {"offset": [32, 32], "shape": [32, 32]}
        assert views["Bt"] == {"offset": [0, 32], "shape": [64, 32]}


# docs/dialects/layout-axe.md section 2 writes S(0)R in the full Axe form, the local rows and columns as `m`
# iters: (2, 1, "mesh.x"), (32, 32, "m"), (32, 1, "m") on a [64, 32] tensor. That mem facet is each core's
# part row-major, which is where a row block of the whole tensor already lies in global memory; backend-pto
# refused it as "a part of the tensor" (pto.layout-mem).
from htp.dialects.tile import muls  # noqa: E402

ROWS_AXE = Layout.axe(shard=[(2, 1, "mesh.x"), (32, 32, "m"), (32, 1, "m")])
# The columns split instead: each core's part is not a block of the whole, so a stated row-major part is a
# layout backend-pto does not give it.
COLS_AXE = Layout.axe(shard=[(64, 16, "m"), (2, 1, "mesh.x"), (16, 1, "m")])


@kernel(mapping=[2])
def scale_rows(X: In[Tensor[64, 32, f32] @ ROWS_AXE], Y: Out[Tensor[64, 32, f32] @ Layout("S(0)R")]):
    store(Y, muls(load(X), 3.0))


@kernel(mapping=[2])
def scale_cols(X: In[Tensor[64, 32, f32] @ COLS_AXE], Y: Out[Tensor[64, 32, f32] @ Layout("RS(0)")]):
    store(Y, muls(load(X), 3.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_the_full_axe_form_of_a_row_sharded_layout_runs_on_both_targets(tmp_path, target):
    ctx = htp.Context()
    X = np.random.default_rng(11).standard_normal((64, 32), dtype=np.float32)
    pkg = ctx.compile(scale_rows, target, tmp_path / "pkg")
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=X)["Y"], 3 * X, rtol=1e-6)


def test_aie_runs_the_full_axe_form_of_a_column_sharded_layout(tmp_path):
    # (each core's dense part arrives in its own memory by DMA; pto-a2a3sim refuses it, below)
    ctx = htp.Context()
    X = np.random.default_rng(12).standard_normal((64, 32), dtype=np.float32)
    pkg = ctx.compile(scale_cols, "aie-npu1", tmp_path / "pkg")
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=X)["Y"], 3 * X, rtol=1e-6)


def test_pto_refuses_a_stated_row_major_part_that_is_not_a_block_of_the_whole(tmp_path):
    with pytest.raises(htp.CompileError, match=r"memory layout of 'X' of kernel 'scale_cols' is of a part of the "
                                                r"tensor.*\[pto.layout-mem\]"):
        htp.Context().compile(scale_cols, "pto-a2a3sim", tmp_path / "pkg")


# A device iter minor to a local iter of its dim deals the dim to the cores cyclically: row k of the tensor to
# core k mod 2 here. Both targets ran it as a block shard (core 0 the first 16 rows), silently; it is now
# layout.cyclic at the layout, on every target (docs/backends/aie.md section 7: "a diagnostic naming the
# construct"). And an extent-1 iter of a size-1 dim, which section 2's rule covers, was refused as "beyond the
# last dim".
CYCLIC = Layout.axe(shard=[(16, 48, "m"), (2, 1, "mesh.x"), (48, 1, "m")])
BLOCK_CYCLIC = Layout.axe(shard=[(2, 256, "m"), (2, 1, "mesh.x"), (8, 32, "m"), (32, 1, "m")])


@kernel(mapping=[2])
def add_cyclic(X: In[Tensor[32, 48, f32] @ CYCLIC], Z: Out[Tensor[32, 48, f32] @ CYCLIC]):
    store(Z, muls(load(X), 2.0))


@kernel(mapping=[2])
def add_block_cyclic(X: In[Tensor[32, 32, f32] @ BLOCK_CYCLIC], Z: Out[Tensor[32, 32, f32] @ Layout("S(0)R")]):
    store(Z, muls(load(X), 2.0))


@kernel(mapping=[2])
def unit_trailing_dim(X: In[Tensor[32, 1, f32] @ Layout.axe(shard=[(2, 1, "mesh.x"), (16, 1, "m"), (1, 1, "m")])],
                      Z: Out[Tensor[32, 1, f32] @ Layout("S(0)R")]):
    store(Z, muls(load(X), 2.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_cyclic_shard_is_refused_and_a_unit_iter_is_taken(tmp_path, target):
    ctx = htp.Context()
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(add_cyclic, target, tmp_path / "cyclic")
    assert ("shard iter (2, 1, mesh.x) is minor to the local iter (16, 48, m) in dim 0: the dim is dealt to the 2 "
            "cores cyclically (one index each in turn)") in str(e.value)
    assert "[layout.cyclic]" in str(e.value)
    with pytest.raises(htp.CompileError, match=r"cyclically \(blocks of 8 indices each in turn\)"):
        ctx.compile(add_block_cyclic, target, tmp_path / "block_cyclic")
    x = np.arange(32, dtype=np.float32).reshape(32, 1)
    pkg = ctx.compile(unit_trailing_dim, target, tmp_path / "unit")
    np.testing.assert_array_equal(htp.bind(pkg, ctx).run(X=x)["Z"], 2 * x)


# A layout at a mesh offset (a sub-mesh), or sharding over every other coordinate of a mesh axis, compiled for
# pto-a2a3sim and failed at run time inside the orchestration ("ChipTensor::view: dimension 0 out of range");
# it is now refused at compile time on both targets (aie-npu1 already refused it).
SUB_MESH = Layout.axe(shard=[(2, 1, "mesh.x"), (16, 32, "m"), (32, 1, "m")], offset={"mesh.x": 2})
EVERY_OTHER = Layout.axe(shard=[(2, 2, "mesh.x"), (16, 32, "m"), (32, 1, "m")])


@kernel(mapping=[4])
def scale_sub_mesh(X: In[Tensor[32, 32, f32] @ SUB_MESH], Z: Out[Tensor[32, 32, f32] @ SUB_MESH]):
    store(Z, muls(load(X), 3.0))


@kernel(mapping=[4])
def scale_every_other(X: In[Tensor[32, 32, f32] @ EVERY_OTHER], Z: Out[Tensor[32, 32, f32] @ EVERY_OTHER]):
    store(Z, muls(load(X), 3.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_sub_mesh_or_strided_shard_is_refused_at_compile_time(tmp_path, target):
    ctx = htp.Context()
    for fn, text in [(scale_sub_mesh, "mesh offset"), (scale_every_other, "shard")]:
        with pytest.raises(htp.CompileError, match=text):
            ctx.compile(fn, target, tmp_path / fn.__name__)


# A layout on a workload's or a CSP program's parameter (layout-axe.md section 1: "Layouts go on parameters",
# of kernels) said "got an arithmetic expression" with a follow-on error, or "'BinOp' is not a tile type".
from htp.dialects.csp import Channel, process, program, recv, send  # noqa: E402
from htp.dialects.tile import Tile  # noqa: E402


@kernel
def doubled(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]]):
    store(y, muls(load(x), 2.0))


@workload
def laid_out_workload(X: In[Tensor[64, 32, f32] @ Layout("RR", order=[1, 0])], Y: Out[Tensor[64, 32, f32]]):
    for i in P(4):
        doubled[i](X.tile(i, 0), Y.tile(i, 0))


@program
def laid_out_program(X: In[Tensor[64, 32, f32]] @ Layout("S(0)R"), Y: Out[Tensor[64, 32, f32]]):
    c = Channel[Tile[16, 32, f32]](depth=2)

    @process(produces=[c])
    def ld():
        for i in range(4):
            send(c, load(X.tile(i, 0, shape=(16, 32))))

    @process(consumes=[c])
    def st():
        for i in range(4):
            store(Y.tile(i, 0, shape=(16, 32)), recv(c))


def test_a_layout_on_a_workload_or_program_parameter_says_where_layouts_go(tmp_path):
    ctx = htp.Context()
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(laid_out_workload, "pto-a2a3sim", tmp_path / "w")
    text = str(e.value)
    assert "parameter 'X' of a workload has a layout; layouts go on the parameters of the @kernel" in text, text
    assert "[wsp.layout]" in text and "wsp.argument" not in text, text  # (no follow-on error)
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(laid_out_program, "pto-a2a3sim", tmp_path / "p")
    assert "parameter 'X' of program 'laid_out_program': it has a layout" in str(e.value), str(e.value)
