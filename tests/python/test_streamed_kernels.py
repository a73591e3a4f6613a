"""A kernel entry that loops over tiles of tensors larger than an AIE core's memory, written as the tile
dialect's docs write loops (docs/dialects/tile.md): backend-aie held a kernel entry's tensors whole in its
one core and refused these (aie.validate.memory); it now runs the loop's body as a workload of the same
name that streams one iteration's tiles at a time (docs/backends/aie.md §2). Ascend runs them as they are."""
from __future__ import annotations

import numpy as np
import pytest

import htp
from htp.dialects.tile import (In, Out, Scalar, Tensor, add, adds, i32, colexpand_add, colexpand_mul, exp, f32, full,
                               kernel, load, matmul, mul, muls, relu, rowexpand_div, rowexpand_mul, rowexpand_sub,
                               rowmax, rowsum, rsqrt, store, sub, transpose)
from htp.dialects.tile import max  # noqa: A004 (the tile op)

TARGETS = ["pto-a2a3sim", "aie-npu1"]

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_a_loop_over_row_tiles_of_large_tensors_runs": [
        ("kernel entry looping over tiles of tensors larger than a core", "pto-a2a3sim"),
        ("kernel entry looping over tiles of tensors larger than a core", "aie-npu1")],
    "test_a_loop_mixing_a_matmul_and_vector_work_runs": [
        ("kernel entry looping over tiles, mixing cube and vector work", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_gemm_written_as_nested_loops_over_output_tiles_runs": [
        ("kernel entry with nested loops over tiles and an inner K-loop, larger than a core", t)
        for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_loop_carrying_a_running_max_over_a_large_tensor_runs": [
        ("kernel entry whose loop carries a register over tensors larger than a core", t)
        for t in ("pto-a2a3sim", "aie-npu1")],
    "test_two_loops_over_a_large_tensor_run": [
        ("kernel entry with several loops over tensors larger than a core", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_flash_attention_per_head_launched_by_a_workload_runs": [
        ("kernel launched by a workload whose loop carries tiles, mixing cube and vector work", t)
        for t in ("pto-a2a3sim", "aie-npu1")],
    "test_flash_attention_in_one_kernel_runs": [
        ("kernel entry whose loop carries tiles, mixing cube and vector work", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_large_loop_reading_the_neighbouring_tile_under_an_if_runs": [
        ("kernel entry larger than a core reading the previous or next tile under an if on the loop variable", t)
        for t in ("pto-a2a3sim", "aie-npu1")],
}


@kernel
def rows_exp(X: In[Tensor[128, 256, f32]], Y: Out[Tensor[128, 256, f32]]):
    for i in range(16):
        store(Y[i * 8:(i + 1) * 8, :], exp(load(X[i * 8:(i + 1) * 8, :])))


# 64 x 128 rows normalised 16 at a time, with a scale and a shift read whole every iteration.
@kernel
def layernorm(X: In[Tensor[64, 128, f32]], G: In[Tensor[1, 128, f32]], B: In[Tensor[1, 128, f32]],
              Y: Out[Tensor[64, 128, f32]]):
    for i in range(4):
        x = load(X.tile(i, 0, shape=(16, 128)))
        mean = muls(rowsum(x), 1.0 / 128)
        xc = rowexpand_sub(x, mean)
        var = muls(rowsum(mul(xc, xc)), 1.0 / 128)
        y = rowexpand_mul(xc, rsqrt(adds(var, 1e-5)))
        store(Y.tile(i, 0, shape=(16, 128)), colexpand_add(colexpand_mul(y, load(G)), load(B)))


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_over_row_tiles_of_large_tensors_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(21)
    X = rng.standard_normal((128, 256), dtype=np.float32)
    pkg = ctx.compile(rows_exp, target, tmp_path / "exp")
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=X)["Y"], np.exp(X), rtol=1e-5)
    X = rng.standard_normal((64, 128), dtype=np.float32)
    G = rng.standard_normal((1, 128), dtype=np.float32)
    B = rng.standard_normal((1, 128), dtype=np.float32)
    pkg2 = ctx.compile(layernorm, target, tmp_path / "layernorm")
    r = htp.bind(pkg2, ctx).run(X=X, G=G, B=B)
    m, v = X.mean(1, keepdims=True), X.var(1, keepdims=True)
    np.testing.assert_allclose(r["Y"], (X - m) / np.sqrt(v + 1e-5) * G + B, rtol=1e-3, atol=1e-4)
    if target == "aie-npu1":
        # The entries keep their names and parameters; the exp streams through one core's FIFOs (two, double
        # buffered), the layernorm — three inputs — runs an iteration per host-orchestrated task.
        assert [(e["name"], e["kind"]) for e in pkg.entrypoints] == [("rows_exp", "workload")]
        assert [p["name"] for p in pkg2.entrypoints[0]["params"]] == ["X", "G", "B", "Y"]
        mlir = (pkg.path / "codegen/aie/rows_exp/aie.mlir").read_text()
        assert "aie.objectfifo @in_X(" in mlir and "memref<8x256xf32>" in mlir
        assert (pkg2.path / "codegen/aie/layernorm/orchestration.json").exists()


# A register carried from one iteration to the next (an accumulator) runs as parts, the accumulator in a tensor
# between iterations; this one's iteration still does not fit a core (its 128 x 32 accumulator in, out and as
# a register beside the chunks): the memory error names the objects.
@kernel
def carried(X: In[Tensor[128, 256, f32]], W: In[Tensor[256, 32, f32]], Y: Out[Tensor[128, 32, f32]]):
    acc = full((128, 32), 0.0, f32)
    for k in range(8):
        acc = matmul(load(X[:, k * 32:(k + 1) * 32]), load(W[k * 32:(k + 1) * 32, :]), acc)
    store(Y, acc)


def test_a_loop_carrying_a_register_is_not_streamed(tmp_path):
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(carried, "aie-npu1", tmp_path / "pkg")
    assert any(d.code == "aie.validate.memory" for d in e.value.errors), str(e.value)


# docs/dialects/tile.md's first program, as written there: 32 x 256 f32 row tiles are 32 KB each way, which
# double buffered with the body's registers did not fit a core even streamed (197 KB). Its body works row by
# row, so it streams in blocks of fewer rows (and elementwise ops reuse their operand's array).
@kernel
def softmax(x: In[Tensor[128, 256, f32]], y: Out[Tensor[128, 256, f32]]):
    for r in range(128 // 32):
        t = load(x.tile(r, 0, shape=(32, 256)))
        m = rowmax(t)
        e = exp(rowexpand_sub(t, m))
        s = rowsum(e)
        store(y.tile(r, 0, shape=(32, 256)), rowexpand_div(e, s))


# A layernorm that loads gamma and beta once, before its loop (four inputs with eps: host-orchestrated on AIE,
# an iteration per task, the loads moved into the loop body).
N = 128


@kernel
def layernorm_hoisted(x: In[Tensor[64, N, f32]], gamma: In[Tensor[1, N, f32]], beta: In[Tensor[1, N, f32]],
                      eps: Scalar[f32], y: Out[Tensor[64, N, f32]]):
    g = load(gamma)
    b = load(beta)
    for r in range(64 // 16):
        t = load(x.tile(r, 0, shape=(16, N)))
        mean = muls(rowsum(t), 1.0 / N)
        d = rowexpand_sub(t, mean)
        var = muls(rowsum(mul(d, d)), 1.0 / N)
        inv = rsqrt(adds(var, eps))
        store(y.tile(r, 0, shape=(16, N)), colexpand_add(colexpand_mul(rowexpand_mul(d, inv), g), b))


@pytest.mark.parametrize("target", TARGETS)
def test_the_tile_docs_softmax_and_a_hoisted_layernorm_run(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(22)
    x = rng.standard_normal((128, 256), dtype=np.float32)
    pkg = ctx.compile(softmax, target, tmp_path / "softmax")
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(x=x)["y"], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    if target == "aie-npu1":  # four iterations of 32 rows became eight of 16 (16 KB objects)
        mlir = (pkg.path / "codegen/aie/softmax/aie.mlir").read_text()
        assert "memref<16x256xf32>" in mlir and "memref<32x256xf32>" not in mlir, mlir
    x = rng.standard_normal((64, N), dtype=np.float32)
    g = rng.standard_normal((1, N), dtype=np.float32)
    b = rng.standard_normal((1, N), dtype=np.float32)
    pkg = ctx.compile(layernorm_hoisted, target, tmp_path / "layernorm")
    r = htp.bind(pkg, ctx).run(x=x, gamma=g, beta=b, eps=1e-5)
    m, v = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    np.testing.assert_allclose(r["y"], (x - m) / np.sqrt(v + 1e-5) * g + b, rtol=1e-3, atol=1e-4)


# A projection and its activation per row tile, the weight loaded once before the loop: on Ascend a matmul
# runs on the cube core and relu on the vector core, and backend-pto split kernels only between top-level
# statements (pto.core-type for the loop); the entry now runs as the workload of its name launching the
# iteration kernel per row tile, each launch split into a cube and a vector task. AIE streams it in row blocks.
@kernel
def proj_relu(x: In[Tensor[128, 256, f32]], w: In[Tensor[256, 16, f32]], y: Out[Tensor[128, 16, f32]]):
    wt = load(w)
    for r in range(4):
        store(y.tile(r, 0, shape=(32, 16)), relu(matmul(load(x.tile(r, 0, shape=(32, 256))), wt)))


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_mixing_a_matmul_and_vector_work_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(23)
    x = rng.standard_normal((128, 256), dtype=np.float32)
    w = rng.standard_normal((256, 16), dtype=np.float32)
    pkg = ctx.compile(proj_relu, target, tmp_path / "proj")
    r = htp.bind(pkg, ctx).run(x=x, w=w)
    np.testing.assert_allclose(r["y"], np.maximum(x @ w, 0), rtol=1e-4, atol=1e-3)
    assert [e["name"] for e in pkg.entrypoints] == ["proj_relu"]
    if target == "pto-a2a3sim":
        assert r.report["tasks"] == 8  # a cube and a vector task per row tile


# Flash attention in one kernel, as tile.md's ops let a user write it: an online softmax over key/value blocks
# whose loop carries the running max, sum and output. On Ascend the loop mixes cube work (Q K^T, P V) and
# vector work in every iteration with state carried between them (pto.core-type); it now runs as parts
# launched in order, the carries in tensors between them, each part split between cube and vector cores.
SQ, SK, D, BK = 16, 64, 16, 16


@kernel
def flash(q: In[Tensor[SQ, D, f32]], k: In[Tensor[SK, D, f32]], v: In[Tensor[SK, D, f32]],
          o: Out[Tensor[SQ, D, f32]]):
    qt = load(q)
    m = full((SQ, 1), -1.0e30, f32)
    l = full((SQ, 1), 0.0, f32)
    acc = full((SQ, D), 0.0, f32)
    for j in range(SK // BK):
        s = muls(matmul(qt, transpose(load(k[j * BK:(j + 1) * BK, :]))), 0.25)
        m_new = max(m, rowmax(s))
        alpha = exp(sub(m, m_new))
        p = exp(rowexpand_sub(s, m_new))
        l = add(mul(l, alpha), rowsum(p))
        acc = add(rowexpand_mul(acc, alpha), matmul(p, load(v[j * BK:(j + 1) * BK, :])))
        m = m_new
    store(o, rowexpand_div(acc, l))


@pytest.mark.parametrize("target", TARGETS)
def test_flash_attention_in_one_kernel_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(26)
    q, k, v = (rng.standard_normal(shape, dtype=np.float32) for shape in ((SQ, D), (SK, D), (SK, D)))
    pkg = ctx.compile(flash, target, tmp_path / "flash")
    r = htp.bind(pkg, ctx).run(q=q, k=k, v=v)
    s = q @ k.T * 0.25
    e = np.exp(s - s.max(1, keepdims=True))
    np.testing.assert_allclose(r["o"], (e / e.sum(1, keepdims=True)) @ v, rtol=1e-4, atol=1e-5)
    assert [e["name"] for e in pkg.entrypoints] == ["flash"]
    if target == "pto-a2a3sim":
        # Every iteration of four runs on both core types, in order after the part before the loop.
        assert r.report["tasks"] > 8


# A GEMM as a user writes it from tile.md: loops over the output tiles (i, j) and a K-loop accumulating in a
# register. The whole tensors (3 x 64 KB) do not fit an AIE core, and the entry was not streamed: its loop
# over i was not one whose offsets are affine in i alone. The perfect nest (i, j) now is the workload's loops
# (`for i in P.seq(4): for i1 in P.seq(4)`), the K-loop stays in the iteration kernel reading its block of A's
# rows and B's columns (16 KB each); with a relu after the K-loop, Ascend splits each iteration between cube
# and vector.
from htp.dialects.tile import Tile  # noqa: E402


@kernel
def gemm_tiles(A: In[Tensor[128, 128, f32]], B: In[Tensor[128, 128, f32]], C: Out[Tensor[128, 128, f32]]):
    for i in range(4):
        for j in range(4):
            acc: Tile[32, 32, f32] = full((32, 32), 0.0)
            for k in range(4):
                acc = matmul(load(A[i * 32:i * 32 + 32, k * 32:k * 32 + 32]),
                             load(B[k * 32:k * 32 + 32, j * 32:j * 32 + 32]), acc=acc)
            store(C[i * 32:i * 32 + 32, j * 32:j * 32 + 32], relu(acc))


@pytest.mark.parametrize("target", TARGETS)
def test_a_gemm_written_as_nested_loops_over_output_tiles_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(128)
    A, B = (rng.standard_normal((128, 128), dtype=np.float32) for _ in range(2))
    pkg = ctx.compile(gemm_tiles, target, tmp_path / "gemm")
    r = htp.bind(pkg, ctx).run(A=A, B=B)
    np.testing.assert_allclose(r["C"], np.maximum(A @ B, 0), rtol=1e-4, atol=1e-3)
    assert [e["name"] for e in pkg.entrypoints] == ["gemm_tiles"]
    if target == "pto-a2a3sim":
        assert r.report["tasks"] == 32  # a cube and a vector task per output tile
    else:  # an iteration's blocks, double buffered, fill a core: the 16 iterations run as tasks
        assert r.report["orchestrated"] is True and r.report["tasks"] == 16


# Kernel entries over tensors larger than an AIE core that were not one loop with nothing carried: a loop
# carrying a running max over column chunks of an 80 KB input, and two loops over it one after another. On
# aie-npu1 they were aie.validate.memory; each now runs as parts one after another (htp::entry_parts_workload:
# the statements before the loop, the loop's iterations over their chunks, the statements after it), a carried
# register in a tensor between them, each part within a core.
RM, NM, WM = 16, 1280, 128


@kernel
def run_max(x: In[Tensor[RM, NM, f32]], m_out: Out[Tensor[RM, 1, f32]]):
    m = full((RM, 1), -1.0e30, f32)
    for j in range(NM // WM):
        m = max(m, rowmax(load(x[:, j * WM:(j + 1) * WM])))
    store(m_out, m)


@kernel
def two_loops(x: In[Tensor[RM, NM, f32]], y1: Out[Tensor[RM, NM, f32]], y2: Out[Tensor[RM, NM, f32]]):
    for j in range(NM // WM):
        store(y1[:, j * WM:(j + 1) * WM], exp(load(x[:, j * WM:(j + 1) * WM])))
    for j in range(NM // WM):
        store(y2[:, j * WM:(j + 1) * WM], muls(load(x[:, j * WM:(j + 1) * WM]), -1.0))


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_carrying_a_running_max_over_a_large_tensor_runs(tmp_path, target):
    ctx = htp.Context()
    x = np.random.default_rng(403).standard_normal((RM, NM), dtype=np.float32)
    pkg = ctx.compile(run_max, target, tmp_path / "max")
    r = htp.bind(pkg, ctx).run(x=x)
    np.testing.assert_array_equal(r["m_out"], x.max(1, keepdims=True))
    if target == "aie-npu1":  # the part before the loop, ten iterations, the part after it
        assert r.report["orchestrated"] is True and r.report["tasks"] == 12


@pytest.mark.parametrize("target", TARGETS)
def test_two_loops_over_a_large_tensor_run(tmp_path, target):
    ctx = htp.Context()
    x = np.random.default_rng(404).standard_normal((RM, NM), dtype=np.float32)
    pkg = ctx.compile(two_loops, target, tmp_path / "two")
    r = htp.bind(pkg, ctx).run(x=x)
    np.testing.assert_allclose(r["y1"], np.exp(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(r["y2"], -x)
    if target == "aie-npu1":
        assert r.report["orchestrated"] is True and r.report["tasks"] == 20


# The same kernels launched by a workload: flash attention per head over a grid, and C = A Bᵀ over output tiles
# with the transpose inside the K-loop (an accumulator carried across cube and vector work). backend-pto cut
# only kernel entries this way (pto.core-type); each launch now becomes the kernel's parts in an ordered group,
# the carries in a slot per launch of an intermediate, an accumulator loaded back added to a fresh product (a2a3
# cannot load one into the cube's L0C).
from htp.dialects.wsp import P, workload  # noqa: E402

H = 3


@workload
def heads(Q: In[Tensor[H, SQ, D, f32]], K: In[Tensor[H, SK, D, f32]], V: In[Tensor[H, SK, D, f32]],
          O: Out[Tensor[H, SQ, D, f32]]):
    for h in P(H):
        flash[h](Q[h], K[h], V[h], O[h])


@kernel
def abt(a: In[Tensor[16, 64, f32]], b: In[Tensor[16, 64, f32]], c: Out[Tensor[16, 16, f32]]):
    acc = full((16, 16), 0.0, f32)
    for k in range(2):
        acc = matmul(load(a[:, k * 32:(k + 1) * 32]), transpose(load(b[:, k * 32:(k + 1) * 32])), acc)
    store(c, acc)


@workload
def gemm_abt(A: In[Tensor[48, 64, f32]], B: In[Tensor[80, 64, f32]], C: Out[Tensor[48, 80, f32]]):
    for i, j in P(3, 5):
        abt[i, j](A[i * 16:(i + 1) * 16, :], B[j * 16:(j + 1) * 16, :], C.tile(i, j))


@pytest.mark.parametrize("target", TARGETS)
def test_flash_attention_per_head_launched_by_a_workload_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal(shape, dtype=np.float32) for shape in ((H, SQ, D), (H, SK, D), (H, SK, D)))
    pkg = ctx.compile(heads, target, tmp_path / "heads")
    r = htp.bind(pkg, ctx).run(Q=q, K=k, V=v)
    for h in range(H):
        s = q[h] @ k[h].T * 0.25
        e = np.exp(s - s.max(1, keepdims=True))
        np.testing.assert_allclose(r["O"][h], (e / e.sum(1, keepdims=True)) @ v[h], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_a_transpose_inside_a_k_loop_of_a_launched_kernel_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(41)
    A = rng.standard_normal((48, 64), dtype=np.float32)
    B = rng.standard_normal((80, 64), dtype=np.float32)
    pkg = ctx.compile(gemm_abt, target, tmp_path / "abt")
    r = htp.bind(pkg, ctx).run(A=A, B=B)
    np.testing.assert_allclose(r["C"], A @ B.T, rtol=1e-4, atol=1e-3)


# A register only some iterations assign (`if i == 2: keep = ...`), read after the loop: cut into parts, the
# iteration kernel stored the register whatever the branch (its carry was Out only), so aie-npu1 returned the
# last tile or zeros and pto-a2a3sim whatever its buffer held. A register one branch of an `if` defines keeps
# its value on the other: it is read (htp::register_inputs), so it is carried in and out.
@kernel
def keep_one(X: In[Tensor[1024, 32, f32]], out: Out[Tensor[32, 32, f32]]):
    keep = full((32, 32), 0.0, f32)
    for i in range(32):
        if i == 2:
            keep = load(X.tile(i, 0, shape=(32, 32)))
    store(out, keep)


@kernel
def keep_mixed(a: In[Tensor[16, 16, f32]], w: In[Tensor[16, 16, f32]], y: Out[Tensor[16, 16, f32]],
               flag: Scalar[i32]):
    keep = full((16, 16), 1.0, f32)
    t = matmul(load(a), load(w))
    if flag > 0:
        keep = relu(t)
    store(y, matmul(keep, load(w)))


@pytest.mark.parametrize("target", TARGETS)
def test_a_register_assigned_on_some_iterations_keeps_its_value(tmp_path, target):
    ctx = htp.Context()
    X = np.random.default_rng(212).standard_normal((1024, 32)).astype(np.float32)
    pkg = ctx.compile(keep_one, target, tmp_path / "keep")
    np.testing.assert_array_equal(htp.bind(pkg, ctx).run(X=X)["out"], X[64:96])
    # On Ascend, split between the core types: the vector part defining `keep` on one branch hands it on either way.
    rng = np.random.default_rng(5)
    a, w = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    pkg = ctx.compile(keep_mixed, target, tmp_path / "mixed")
    for flag in (0, 1):
        keep = np.maximum(a @ w, 0) if flag else np.ones((16, 16), np.float32)
        np.testing.assert_allclose(htp.bind(pkg, ctx).run(a=a, w=w, flag=flag)["y"], keep @ w, rtol=1e-4, atol=1e-4)


# Tiles a branch computes and stores within it are not carried: the loop still streams (one iteration's tiles
# at a time on AIE), storing every third tile of an InOut tensor and leaving the others as the caller gave them.
@kernel
def every_third(X: In[Tensor[1024, 32, f32]], Y: InOut[Tensor[1024, 32, f32]]):
    for i in range(32):
        if i % 3 == 0:
            store(Y.tile(i, 0, shape=(32, 32)), exp(load(X.tile(i, 0, shape=(32, 32)))))


@pytest.mark.parametrize("target", TARGETS)
def test_a_branch_storing_some_tiles_streams(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(29)
    X, Y = (rng.standard_normal((1024, 32)).astype(np.float32) for _ in range(2))
    pkg = ctx.compile(every_third, target, tmp_path / "third")
    want = Y.copy()
    for i in range(0, 32, 3):
        want[i * 32:(i + 1) * 32] = np.exp(X[i * 32:(i + 1) * 32])
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=X, Y=Y.copy())["Y"], want, rtol=1e-5, atol=1e-6)


# The row a loop reads computed into a scalar register first (tile.md §2: a scalar assigned from a loop
# variable is a register): AIE evaluates offsets at compile time and did not stream this (aie.validate.memory:
# X and Y whole, 192 KB on one core).
@kernel
def odd_row_tiles(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[128, 128, f32]]):
    for i in range(8):
        r = 2 * i + 1
        store(Y.tile(i, 0, shape=(16, 128)), exp(load(X.tile(r, 0, shape=(16, 128)))))


@pytest.mark.parametrize("target", TARGETS)
def test_an_offset_through_a_scalar_register_streams(tmp_path, target):
    ctx = htp.Context()
    X = np.random.default_rng(31).standard_normal((256, 128)).astype(np.float32)
    pkg = ctx.compile(odd_row_tiles, target, tmp_path / "odd")
    want = np.exp(X.reshape(16, 16, 128)[1::2].reshape(128, 128))
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=X)["Y"], want, rtol=1e-5)
    if target == "aie-npu1":
        assert [(e["name"], e["kind"]) for e in pkg.entrypoints] == [("odd_row_tiles", "workload")]


# A scale carried from one row tile to the next as a scalar register, through a loop mixing a projection (cube)
# and its scaling (vector): backend-pto carries tiles between parts, not scalars. The error said only that a
# kernel runs on one core type, naming pto.muls; it now names the loop and the register that stops each form.
@kernel
def halving_scale(A: In[Tensor[128, 64, f32]], W: In[Tensor[64, 64, f32]], Y: Out[Tensor[128, 64, f32]]):
    s = 1.0
    for i in range(4):
        p = matmul(load(A.tile(i, 0, shape=(32, 64))), load(W))
        store(Y.tile(i, 0, shape=(32, 64)), relu(muls(p, s)))
        s = s * 0.5


def test_a_scalar_carried_through_a_mixed_loop_is_named(tmp_path):
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(halving_scale, "pto-a2a3sim", tmp_path / "pkg")
    [d] = [d for d in e.value.errors if d.code == "pto.core-type"]
    assert "scalar register 's' (set on line" in d.message and "in a loop" in d.message, d.message
    assert "is carried across a loop's iterations or around it; only tile registers are carried" in d.message
    lines = open(__file__).read().splitlines()
    assert lines[d.span["line"] - 1].strip() == "for i in range(4):" and "def halving_scale" in lines[d.span["line"] - 3]


# A large kernel entry whose loop runs to a runtime scalar (`for i in range(n)`) was aie.validate.memory on aie-npu1
# (pto-a2a3sim ran it): it streams as a workload whose loop extent the host evaluates, and a row tile past the
# tensor is a run error on both.
@kernel
def exp_first_rows(x: In[Tensor[1024, 128, f32]], y: Out[Tensor[1024, 128, f32]], n: Scalar[i32]):
    for i in range(n):
        store(y.tile(i, 0, shape=(32, 128)), exp(load(x.tile(i, 0, shape=(32, 128)))))


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_to_a_runtime_bound_over_large_tensors_streams(tmp_path, target):
    ctx = htp.Context()
    bound = htp.bind(ctx.compile(exp_first_rows, target, tmp_path / "p"), ctx)
    x = np.random.default_rng(31).standard_normal((1024, 128)).astype(np.float32)
    for n in (0, 5, 32):
        y = bound.run(x=x, n=n)["y"]
        np.testing.assert_allclose(y[:32 * n], np.exp(x[:32 * n]), rtol=1e-5)
        assert not y[32 * n:].any()
    with pytest.raises(htp.RunError, match=r"covers \[1024, 1056\) in dimension 0, outside its extent 1024"):
        bound.run(x=x, n=33)


# A large kernel carrying an accumulator through a loop to a runtime bound: aie-npu1 refused it as one core's
# 128 KB block (aie.validate.memory); its parts now stream host-orchestrated, the host evaluating the bound.
from htp.dialects.tile import colsum  # noqa: E402


@kernel
def colsum_first_n(x: In[Tensor[256, 128, f32]], cs: Out[Tensor[1, 128, f32]], n: Scalar[i32]):
    acc = full((1, 128), 0.0)
    for i in range(n):
        acc = add(acc, colsum(load(x[i * 16:i * 16 + 16, :])))
    store(cs, acc)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_large_loop_carrying_an_accumulator_to_a_runtime_bound_runs(tmp_path, target):
    x = np.random.default_rng(9).standard_normal((256, 128)).astype(np.float32)
    ctx = htp.Context()
    bound = htp.bind(ctx.compile(colsum_first_n, target, tmp_path / "pkg"), ctx)
    for n in (0, 5, 16):
        np.testing.assert_allclose(bound.run(x=x, n=n)["cs"], x[:16 * n].sum(0, keepdims=True), rtol=1e-4, atol=1e-4)


# A kernel entry larger than a core with a tensor parameter its loop never moves (an InOut kept for later, an In
# it does not read): aie-npu1 passed the whole tensor to every iteration's task, which then did not fit a core
# (aie.validate.memory naming '@in_packed_in', a buffer the program never reads) or fell back to one-row blocks
# (aie.limit.stream). An iteration takes only the tensors the kernel moves; the others keep their values.
@kernel
def with_unused(X: In[Tensor[512, 32, f32]], Y: Out[Tensor[512, 32, f32]], U: InOut[Tensor[512, 32, f32]],
                V: In[Tensor[512, 32, f32]]):
    for i in range(16):
        store(Y.tile(i, 0, shape=(32, 32)), adds(load(X.tile(i, 0, shape=(32, 32))), 1.0))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_tensor_parameters_the_loop_never_moves(tmp_path, target):
    x = np.arange(512 * 32, dtype=np.float32).reshape(512, 32) / 64
    u = np.full((512, 32), 7.0, np.float32)
    ctx = htp.Context()
    r = htp.bind(ctx.compile(with_unused, target=target, out=tmp_path / "p"), ctx).run(X=x, U=u.copy(), V=u)
    np.testing.assert_array_equal(r["Y"], x + 1)
    np.testing.assert_array_equal(r["U"], u)


# A smoothing pass over row tiles of a tensor larger than a core, reading the tile before (under `else` of
# `if i == 0`) or after (under `if i < 31`) the current one: aie-npu1 moved each iteration's tiles whatever the
# branch, so the first iteration's X.tile(i - 1) left the tensor (aie.view, "at [-32, 0]"). The loop is cut where
# the branch changes, each part moving what its iterations read.
@kernel
def smooth_back(X: In[Tensor[1024, 32, f32]], Y: Out[Tensor[1024, 32, f32]]):
    for i in range(32):
        cur = load(X.tile(i, 0, shape=(32, 32)))
        if i == 0:
            prev = cur
        else:
            prev = load(X.tile(i - 1, 0, shape=(32, 32)))
        store(Y.tile(i, 0, shape=(32, 32)), muls(add(cur, prev), 0.5))


@kernel
def smooth_ahead(X: In[Tensor[1024, 32, f32]], Y: Out[Tensor[1024, 32, f32]]):
    for i in range(32):
        cur = load(X.tile(i, 0, shape=(32, 32)))
        nxt = cur
        if i < 31:
            nxt = load(X.tile(i + 1, 0, shape=(32, 32)))
        store(Y.tile(i, 0, shape=(32, 32)), sub(nxt, cur))


# The same with an accumulator carried through the loop (the loop then runs as parts): aie-npu1 moved tile -1
# at run time ("covers [-16, 16)", probe round 21).
@kernel
def smooth_and_sum(X: In[Tensor[256, 64, f32]], Y: Out[Tensor[256, 64, f32]], A: Out[Tensor[16, 64, f32]]):
    acc = full((16, 64), 0.0, dtype=f32)
    for i in range(16):
        t = load(X.tile(i, 0, shape=(16, 64)))
        if i == 0:
            p = t
        else:
            p = load(X.tile(i - 1, 0, shape=(16, 64)))
        store(Y.tile(i, 0, shape=(16, 64)), add(p, t))
        acc = add(acc, t)
    store(A, acc)


# Backwards, with statements around the loop (probe round 21's rerun): the split did not see a loop counting
# down, so aie-npu1 moved tile 8 of 8 at run time ("covers [112, 144)").
@kernel
def smooth_from_the_end(X: In[Tensor[256, 64, f32]], Y: Out[Tensor[256, 64, f32]], E: Out[Tensor[16, 64, f32]]):
    store(E, load(X[0:16, :]))
    for i in range(15, -1, -1):
        t = load(X.tile(i, 0, shape=(16, 64)))
        if i == 15:
            p = t
        else:
            p = load(X.tile(i + 1, 0, shape=(16, 64)))
        store(Y.tile(i, 0, shape=(16, 64)), add(p, t))


@pytest.mark.parametrize("target", TARGETS)
def test_a_large_loop_reading_the_neighbouring_tile_under_an_if_runs(tmp_path, target):
    ctx = htp.Context()
    X = np.random.default_rng(37).standard_normal((1024, 32)).astype(np.float32)
    back = X.copy()
    back[32:] = (X[32:] + X[:-32]) * np.float32(0.5)
    ahead = np.zeros_like(X)
    ahead[:-32] = X[32:] - X[:-32]
    for fn, want in ((smooth_back, back), (smooth_ahead, ahead)):
        pkg = ctx.compile(fn, target, tmp_path / fn.__name__)
        np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=X)["Y"], want, rtol=1e-6, atol=1e-6)
    X = np.random.default_rng(47).standard_normal((256, 64)).astype(np.float32)
    r = htp.bind(ctx.compile(smooth_and_sum, target, tmp_path / "sum"), ctx).run(X=X)
    tiles = X.reshape(16, 16, 64)
    want = tiles + np.concatenate([tiles[:1], tiles[:-1]])
    np.testing.assert_allclose(r["Y"], want.reshape(256, 64), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r["A"], tiles.sum(0), rtol=1e-5, atol=1e-5)
    X = np.random.default_rng(61).standard_normal((256, 64)).astype(np.float32)
    r = htp.bind(ctx.compile(smooth_from_the_end, target, tmp_path / "end"), ctx).run(X=X)
    tiles = X.reshape(16, 16, 64)
    want = tiles + np.concatenate([tiles[1:], tiles[-1:]])
    np.testing.assert_allclose(r["Y"], want.reshape(256, 64), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(r["E"], X[:16])


# The neighbouring tile under a branch beside a branch that changes at every iteration (`if i % 3 != 1:`, each
# branch storing its own result): the loop was not cut where `if i == 0` changes (cutting at both would make more
# than three loops), so aie-npu1 still moved X.tile(i - 1) at i = 0: aie.view ("at [-8,0]") for the loop alone,
# and beside a second loop a run-time error ("the view of 'X' passed to kernel 'kl14__0__iter' covers [-8, 8)",
# probe round 19's p14). Only a branch moving a view that leaves its tensor decides where the loop is cut.
@kernel
def neighbour_beside_a_branch(Y: Out[Tensor[144, 128, i32]], X: In[Tensor[144, 128, i32]]):
    for i in range(18):
        t = load(X.tile(i, 0, shape=(8, 128)))
        if i == 0:
            p = t
        else:
            p = load(X.tile(i - 1, 0, shape=(8, 128)))
        e = muls(mul(5, p), -5)
        if i % 3 != 1:
            store(Y.tile(i, 0, shape=(8, 128)), e)
        else:
            store(Y.tile(i, 0, shape=(8, 128)), t)


@kernel
def neighbour_if_positive_beside_a_branch(Y: Out[Tensor[144, 128, i32]], X: In[Tensor[144, 128, i32]]):
    for i in range(18):
        t = load(X.tile(i, 0, shape=(8, 128)))
        p = t
        if i > 0:
            p = load(X.tile(i - 1, 0, shape=(8, 128)))
        if i % 3 != 1:
            store(Y.tile(i, 0, shape=(8, 128)), muls(mul(5, p), -5))
        else:
            store(Y.tile(i, 0, shape=(8, 128)), t)


@kernel
def neighbour_beside_a_branch_then_a_loop(V: Out[Tensor[144, 128, i32]], Y: Out[Tensor[144, 128, i32]],
                                          X: In[Tensor[144, 128, i32]]):
    for i in range(18):
        t = load(X.tile(i, 0, shape=(8, 128)))
        if i == 0:
            p = t
        else:
            p = load(X.tile(i - 1, 0, shape=(8, 128)))
        e = muls(mul(5, p), -5)
        if i % 3 != 1:
            store(Y.tile(i, 0, shape=(8, 128)), e)
        else:
            store(Y.tile(i, 0, shape=(8, 128)), t)
    for i in range(18):
        store(V.tile(i, 0, shape=(8, 128)), adds(load(X.tile(i, 0, shape=(8, 128))), 3))


# Both loops read a neighbour: the previous tile in the first, the next one in the second.
@kernel
def neighbours_in_two_loops(V: Out[Tensor[144, 128, i32]], Y: Out[Tensor[144, 128, i32]],
                            X: In[Tensor[144, 128, i32]]):
    for i in range(18):
        t = load(X.tile(i, 0, shape=(8, 128)))
        p = t
        if i > 0:
            p = load(X.tile(i - 1, 0, shape=(8, 128)))
        if i % 3 != 1:
            store(Y.tile(i, 0, shape=(8, 128)), muls(mul(5, p), -5))
        else:
            store(Y.tile(i, 0, shape=(8, 128)), t)
    for i in range(18):
        t = load(X.tile(i, 0, shape=(8, 128)))
        if i < 17:
            n = load(X.tile(i + 1, 0, shape=(8, 128)))
        else:
            n = t
        if i % 2 == 0:
            store(V.tile(i, 0, shape=(8, 128)), sub(n, t))
        else:
            store(V.tile(i, 0, shape=(8, 128)), add(n, t))


# The next tile under an `if` inside another (`if i > 0: if i < 17:`): the loop was cut where the outer one changes
# only, so the iterations from 1 still moved X.tile(18) at i = 17 (run time, "covers [136, 152)").
@kernel
def next_under_nested_branches(Y: Out[Tensor[144, 128, i32]], X: In[Tensor[144, 128, i32]]):
    for i in range(18):
        t = load(X.tile(i, 0, shape=(8, 128)))
        p = t
        if i > 0:
            if i < 17:
                p = load(X.tile(i + 1, 0, shape=(8, 128)))
        store(Y.tile(i, 0, shape=(8, 128)), add(p, t))


@pytest.mark.parametrize("target", TARGETS)
def test_a_neighbour_read_beside_a_branch_changing_every_iteration_runs(tmp_path, target):
    ctx = htp.Context()
    X = np.random.default_rng(19).integers(-60, 60, size=(144, 128)).astype(np.int32)
    tiles = X.reshape(18, 8, 128)
    prev = np.concatenate([tiles[:1], tiles[:-1]])
    nxt = np.concatenate([tiles[1:], tiles[-1:]])
    odd = (np.arange(18) % 3 == 1)[:, None, None]
    want_y = np.where(odd, tiles, prev * np.int32(-25)).reshape(144, 128)
    for fn in (neighbour_beside_a_branch, neighbour_if_positive_beside_a_branch):
        r = htp.bind(ctx.compile(fn, target, tmp_path / fn.__name__), ctx).run(X=X)
        np.testing.assert_array_equal(r["Y"], want_y, err_msg=fn.__name__)
    r = htp.bind(ctx.compile(neighbour_beside_a_branch_then_a_loop, target, tmp_path / "then_a_loop"), ctx).run(X=X)
    np.testing.assert_array_equal(r["Y"], want_y)
    np.testing.assert_array_equal(r["V"], X + 3)
    r = htp.bind(ctx.compile(neighbours_in_two_loops, target, tmp_path / "two"), ctx).run(X=X)
    np.testing.assert_array_equal(r["Y"], want_y)
    even = (np.arange(18) % 2 == 0)[:, None, None]
    np.testing.assert_array_equal(r["V"], np.where(even, nxt - tiles, nxt + tiles).reshape(144, 128))
    r = htp.bind(ctx.compile(next_under_nested_branches, target, tmp_path / "nested"), ctx).run(X=X)
    inner = ((np.arange(18) > 0) & (np.arange(18) < 17))[:, None, None]
    np.testing.assert_array_equal(r["Y"], np.where(inner, nxt + tiles, tiles + tiles).reshape(144, 128))


# Loops written backwards (`range(15, -1, -1)`, tile.md §2): a kernel entry larger than a core was not streamed
# on aie-npu1 (aie.validate.memory: X and Y whole on one core), and a loop mixing a matmul and vector work was
# pto.core-type on pto-a2a3sim ("its loop bounds are not static", though they are constants). The same loops
# forwards ran on both (probe round 21).
@kernel
def rows_exp_backwards(X: In[Tensor[256, 64, f32]], Y: Out[Tensor[256, 64, f32]]):
    for i in range(15, -1, -1):
        store(Y.tile(i, 0, shape=(16, 64)), exp(load(X.tile(i, 0, shape=(16, 64)))))


@kernel
def projection_backwards(x: In[Tensor[128, 64, f32]], w: In[Tensor[64, 16, f32]], y: Out[Tensor[128, 16, f32]]):
    wt = load(w)
    for r in range(3, -1, -1):
        store(y.tile(r, 0, shape=(32, 16)), relu(matmul(load(x.tile(r, 0, shape=(32, 64))), wt)))


@pytest.mark.parametrize("target", TARGETS)
def test_loops_written_backwards_stream_and_split_like_forward_ones(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(43)
    X = rng.standard_normal((256, 64)).astype(np.float32)
    pkg = ctx.compile(rows_exp_backwards, target, tmp_path / "exp")
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=X)["Y"], np.exp(X), rtol=1e-5)
    x, w = rng.standard_normal((128, 64)).astype(np.float32), rng.standard_normal((64, 16)).astype(np.float32)
    pkg = ctx.compile(projection_backwards, target, tmp_path / "proj")
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(x=x, w=w)["y"], np.maximum(x @ w, 0), rtol=1e-4, atol=1e-3)


# Statements before a loop that read a few rows of a tensor larger than a core (an early store of X[0:8, :]),
# the loop carrying an accumulator to a runtime bound: aie-npu1 ran the statements as a part holding X whole
# (aie.validate.memory, "a [144,128] f32 object of 73728 bytes"). Each part moves what it reads now.
@kernel
def head_then_sum(X: In[Tensor[144, 128, f32]], Y: Out[Tensor[144, 128, f32]], E: Out[Tensor[8, 128, f32]],
                  A: Out[Tensor[8, 128, f32]], n: Scalar[i32]):
    store(E, muls(load(X[0:8, :]), 2.0))
    acc = full((8, 128), 0.0, dtype=f32)
    for i in range(n):
        t = load(X.tile(i, 0, shape=(8, 128)))
        store(Y.tile(i, 0, shape=(8, 128)), t)
        acc = add(acc, t)
    store(A, acc)


@pytest.mark.parametrize("target", TARGETS)
def test_statements_before_a_large_loop_move_only_what_they_read(tmp_path, target):
    ctx = htp.Context()
    X = np.random.default_rng(59).standard_normal((144, 128)).astype(np.float32)
    r = htp.bind(ctx.compile(head_then_sum, target, tmp_path / "p"), ctx).run(X=X, n=18)
    np.testing.assert_array_equal(r["E"], X[:8] * 2)
    np.testing.assert_array_equal(r["Y"], X)
    np.testing.assert_allclose(r["A"], X.reshape(18, 8, 128).sum(0), rtol=1e-5, atol=1e-5)


# A neighbour read under a branch on the parity of the iteration (`if i % 2 == 1: p = load(X.tile(i - 1, ...))`)
# was refused on both targets by the tile checker (tile.view-out-of-bounds, "covers [-8, 136)"): its range of
# the loop variable under a branch followed comparisons (`i > 0`), not `%`. Under `i % 2 == 1` it now takes
# i in [1, 17]. aie-npu1, which moves an iteration's views whatever branch it takes, peels iteration 0 off the
# large loop (the only one where X.tile(i - 1) would leave X) and keeps the `if` over the others.
@kernel
def odd_tiles_add_the_previous(Y: Out[Tensor[144, 128, i32]], X: In[Tensor[144, 128, i32]]):
    for i in range(18):
        t = load(X.tile(i, 0, shape=(8, 128)))
        p = t
        if i % 2 == 1:
            p = load(X.tile(i - 1, 0, shape=(8, 128)))
        store(Y.tile(i, 0, shape=(8, 128)), add(p, t))


@kernel
def small_odd_tiles_add_the_previous(Y: Out[Tensor[32, 16, i32]], X: In[Tensor[32, 16, i32]]):
    for i in range(4):
        t = load(X.tile(i, 0, shape=(8, 16)))
        if i % 2 != 1:
            store(Y.tile(i, 0, shape=(8, 16)), t)
        else:
            store(Y.tile(i, 0, shape=(8, 16)), add(load(X.tile(i - 1, 0, shape=(8, 16))), t))


@kernel
def even_tiles_add_the_previous(Y: Out[Tensor[32, 16, i32]], X: In[Tensor[32, 16, i32]]):
    for i in range(4):
        t = load(X.tile(i, 0, shape=(8, 16)))
        p = t
        if i % 2 == 0:
            p = load(X.tile(i - 1, 0, shape=(8, 16)))
        store(Y.tile(i, 0, shape=(8, 16)), add(p, t))


@pytest.mark.parametrize("target", TARGETS)
def test_a_neighbour_read_under_a_parity_branch_runs(tmp_path, target):
    ctx = htp.Context()
    X = np.random.default_rng(20).integers(-60, 60, size=(144, 128)).astype(np.int32)
    tiles = X.reshape(18, 8, 128)
    prev = np.concatenate([tiles[:1], tiles[:-1]])
    odd = (np.arange(18) % 2 == 1)[:, None, None]
    r = htp.bind(ctx.compile(odd_tiles_add_the_previous, target, tmp_path / "odd"), ctx).run(X=X)
    np.testing.assert_array_equal(r["Y"], np.where(odd, prev + tiles, 2 * tiles).reshape(144, 128))
    S = X[:32, :16].copy()
    small = S.reshape(4, 8, 16)
    r = htp.bind(ctx.compile(small_odd_tiles_add_the_previous, target, tmp_path / "small"), ctx).run(X=S)
    want = np.where((np.arange(4) % 2 == 1)[:, None, None], np.concatenate([small[:1], small[:-1]]) + small, small)
    np.testing.assert_array_equal(r["Y"], want.reshape(32, 16))
    # At i = 0 the even branch reads tile -1: still refused, at the view.
    with pytest.raises(htp.CompileError, match=r"tile.view-out-of-bounds"):
        ctx.compile(even_tiles_add_the_previous, target, tmp_path / "even")


# tile.md's softmax with an `if` in its loop body: a load under `if r > 0: ... else: ...` (both branches the
# same row tile, probe round 24's mutant 31036) and a shift of every other row tile. aie-npu1 streams a loop
# whose 32-row tiles do not fit a core in blocks of fewer rows, and took no body with an `if` in it:
# aie.validate.memory ("compute tile needs 164992 bytes ... but has 65536"); pto-a2a3sim ran both. The
# branches are held to the same row-by-row rules, and a condition on the loop variable reads the iteration
# its row block belongs to.
@kernel
def softmax_loading_under_an_if(x: In[Tensor[128, 256, f32]], y: Out[Tensor[128, 256, f32]]):
    for r in range(128 // 32):
        if r > 0:
            t = load(x.tile(r, 0, shape=(32, 256)))
        else:
            t = load(x.tile(r, 0, shape=(32, 256)))
        m = rowmax(t)
        e = exp(rowexpand_sub(t, m))
        store(y.tile(r, 0, shape=(32, 256)), rowexpand_div(e, rowsum(e)))


@kernel
def softmax_shifting_every_other_tile(x: In[Tensor[128, 256, f32]], y: Out[Tensor[128, 256, f32]]):
    for r in range(128 // 32):
        t = load(x.tile(r, 0, shape=(32, 256)))
        if r % 2 == 1:
            t = adds(t, 1.0)
        e = exp(rowexpand_sub(t, rowmax(t)))
        store(y.tile(r, 0, shape=(32, 256)), rowexpand_div(e, rowsum(e)))


@pytest.mark.parametrize("target", TARGETS)
def test_a_softmax_with_an_if_in_its_loop_runs(tmp_path, target):
    ctx = htp.Context()
    x = np.random.default_rng(24).standard_normal((128, 256)).astype(np.float32)

    def softmax_of(v):
        e = np.exp(v - v.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    r = htp.bind(ctx.compile(softmax_loading_under_an_if, target, tmp_path / "under"), ctx).run(x=x)
    np.testing.assert_allclose(r["y"], softmax_of(x), rtol=2e-4, atol=2e-6)
    shifted = x + np.repeat(np.arange(4) % 2 == 1, 32)[:, None].astype(np.float32)
    r = htp.bind(ctx.compile(softmax_shifting_every_other_tile, target, tmp_path / "shift"), ctx).run(x=x)
    np.testing.assert_allclose(r["y"], softmax_of(shifted), rtol=2e-4, atol=2e-6)


# tile.md's softmax with a loop around its row loop: a batch loop over a 3-d tensor, rows offset by the
# outer variable (`X.tile(4 * h + r, ...)`), and the same loop run twice (probe mutant 33102). aie-npu1 streams
# a loop whose 32-row tiles do not fit a core in blocks of fewer rows, and took a single loop only:
# aie.validate.memory ("compute tile needs 99456 bytes ... but has 65536"); pto-a2a3sim ran all three. The
# innermost loop of the nest is cut into row blocks, the loops around it kept.
@kernel
def batched_softmax(x: In[Tensor[2, 128, 256, f32]], y: Out[Tensor[2, 128, 256, f32]]):
    for b in range(2):
        for r in range(128 // 32):
            t = load(x.tile(b, r, 0, shape=(1, 32, 256)))
            e = exp(rowexpand_sub(t, rowmax(t)))
            store(y.tile(b, r, 0, shape=(1, 32, 256)), rowexpand_div(e, rowsum(e)))


@kernel
def softmax_in_two_halves(x: In[Tensor[256, 256, f32]], y: Out[Tensor[256, 256, f32]]):
    for h in range(2):
        for r in range(4):
            t = load(x.tile(4 * h + r, 0, shape=(32, 256)))
            e = exp(rowexpand_sub(t, rowmax(t)))
            store(y.tile(4 * h + r, 0, shape=(32, 256)), rowexpand_div(e, rowsum(e)))


@kernel
def softmax_twice(x: In[Tensor[128, 256, f32]], y: Out[Tensor[128, 256, f32]]):
    for _ in range(2):
        for r in range(128 // 32):
            t = load(x.tile(r, 0, shape=(32, 256)))
            e = exp(rowexpand_sub(t, rowmax(t)))
            store(y.tile(r, 0, shape=(32, 256)), rowexpand_div(e, rowsum(e)))


@pytest.mark.parametrize("target", TARGETS)
def test_a_softmax_row_loop_inside_another_loop_runs(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(33102)

    def softmax_of(v):
        e = np.exp(v - v.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    for k, shape in [(batched_softmax, (2, 128, 256)), (softmax_in_two_halves, (256, 256)),
                     (softmax_twice, (128, 256))]:
        x = rng.standard_normal(shape).astype(np.float32)
        r = htp.bind(ctx.compile(k, target, tmp_path / k.__name__), ctx).run(x=x)
        np.testing.assert_allclose(r["y"], softmax_of(x), rtol=2e-4, atol=2e-6, err_msg=k.__name__)


# A loop over row tiles mixing cube and vector work that reads the previous tile under `if i > 0` (a smoothing
# before or after the projection), and one whose `if` on the loop variable mixes the two (every other tile
# projected after an activation, the others scaled). pto-a2a3sim failed the first at run time ("ChipTensor::view:
# dimension 0 out of range": each iteration task moved the views of its whole body, the tile before X at i = 0
# too) and refused the second (pto.core-type: cube and vector work in one `if`); aie-npu1 ran both. On pto the
# loop is now cut where the branch changes (htp::split_loop_at_conditions), and the iteration kernel's `if`s
# are distributed like a kernel's.
@kernel
def smooth_then_project(x: In[Tensor[256, 64, f32]], w: In[Tensor[64, 64, f32]], y: Out[Tensor[256, 64, f32]]):
    tw = load(w)
    for i in range(8):
        t = load(x.tile(i, 0, shape=(32, 64)))
        if i > 0:
            t = add(t, load(x.tile(i - 1, 0, shape=(32, 64))))
        store(y.tile(i, 0, shape=(32, 64)), matmul(t, tw))


@kernel
def project_then_smooth(x: In[Tensor[256, 64, f32]], w: In[Tensor[64, 64, f32]], y: Out[Tensor[256, 64, f32]]):
    tw = load(w)
    for i in range(8):
        t = matmul(load(x.tile(i, 0, shape=(32, 64))), tw)
        if i > 0:
            t = add(t, load(x.tile(i - 1, 0, shape=(32, 64))))
        store(y.tile(i, 0, shape=(32, 64)), t)


@kernel
def every_other_tile_projected(x: In[Tensor[256, 64, f32]], w: In[Tensor[64, 64, f32]],
                               y: Out[Tensor[256, 64, f32]]):
    tw = load(w)
    for i in range(8):
        t = load(x.tile(i, 0, shape=(32, 64)))
        if i % 2 == 0:
            t = matmul(relu(t), tw)
        else:
            t = muls(t, 2.0)
        store(y.tile(i, 0, shape=(32, 64)), t)


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_mixing_cube_and_vector_work_with_a_branch_on_its_variable_runs(tmp_path, target):
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((256, 64)) * 0.2).astype(np.float32)
    w = (rng.standard_normal((64, 64)) * 0.2).astype(np.float32)
    prev = np.vstack([np.zeros((32, 64), np.float32), x[:-32]])
    even = (np.arange(256) // 32 % 2 == 0)[:, None]
    ctx = htp.Context()
    for k, want in [(smooth_then_project, (x + prev) @ w), (project_then_smooth, x @ w + prev),
                    (every_other_tile_projected, np.where(even, np.maximum(x, 0) @ w, x * 2))]:
        r = htp.bind(ctx.compile(k, target, tmp_path / k.__name__), ctx).run(x=x, w=w)
        np.testing.assert_allclose(r["y"], want, rtol=1e-4, atol=1e-5, err_msg=k.__name__)
