"""The layouts' memory facet on both simulator targets (docs/dialects/layout-axe.md, docs/backends/pto.md and
aie.md): a column-major operand (`order=[1, 0]`) and a tiled local layout — a 2-level blocked layout, two `m`
iters per dimension — written once and run against NumPy. pto-a2a3sim keeps such a tensor in global memory in
the layout (the binding stages the caller's array; the kernel reads it through a strided or blocked view);
aie-npu1 keeps the core's object in it (the shim DMA reorders, the core's adapter gathers)."""
import json
import textwrap

import numpy as np
import pytest

import htp

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_a_column_major_operand_is_read_in_its_layout": [
        ("layout `mem` facet (strides, order)", "pto-a2a3sim"), ("layout `mem` facet (strides, order)", "aie-npu1")],
    "test_a_blocked_layout_is_read_and_written_in_its_layout": [
        ("tiled local layout (several `m` iters per dim)", "pto-a2a3sim"),
        ("tiled local layout (several `m` iters per dim)", "aie-npu1")],
}

PROGRAM_NAME = "layout_program"  # the program and ctx fixtures: conftest.py
PROGRAM = textwrap.dedent('''
    from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add, muls
    from htp.dialects.wsp import workload, P
    from htp.dialects.layout import Layout


    @kernel
    def add_colmajor(X: In[Tensor[32, 64, f32] @ Layout("RR", order=[1, 0])], Y: In[Tensor[32, 64, f32]],
                     Z: Out[Tensor[32, 64, f32]]):
        store(Z, add(load(X), load(Y)))


    # 32x32 as 2x2 blocks of 16x16, each block row-major, the blocks row-major: element (i, j) at
    # (i // 16) * 512 + (i % 16) * 16 + (j // 16) * 256 + j % 16.
    @kernel
    def add_blocked(X: In[Tensor[32, 32, f32] @ Layout.axe(shard=[(2, 512, "m"), (16, 16, "m"), (2, 256, "m"), (16, 1, "m")])],
                    Y: In[Tensor[32, 32, f32]],
                    Z: Out[Tensor[32, 32, f32] @ Layout.axe(shard=[(2, 512, "m"), (16, 16, "m"), (2, 256, "m"), (16, 1, "m")])]):
        store(Z, add(load(X), muls(load(Y), 2.0)))


    BLOCKED = Layout.axe(shard=[(2, 512, "m"), (16, 16, "m"), (2, 256, "m"), (16, 1, "m")])


    @kernel
    def add_named(X: In[Tensor[32, 32, f32] @ BLOCKED], Y: In[Tensor[32, 32, f32]], Z: Out[Tensor[32, 32, f32] @ BLOCKED]):
        store(Z, add(load(X), muls(load(Y), 2.0)))


    def factory():
        local = Layout("RR", order=[1, 0])

        @kernel
        def add_local(X: In[Tensor[32, 64, f32] @ local], Y: In[Tensor[32, 64, f32]], Z: Out[Tensor[32, 64, f32]]):
            store(Z, add(load(X), load(Y)))
        return add_local


    add_local = factory()


    @kernel
    def holes(X: In[Tensor[16, 16, f32] @ Layout("RR", strides=[32, 1])], Z: Out[Tensor[16, 16, f32]]):
        store(Z, load(X))


    @workload
    def launches_colmajor(X: In[Tensor[64, 64, f32]], Y: In[Tensor[64, 64, f32]], Z: Out[Tensor[64, 64, f32]]):
        for i in P(2):
            add_colmajor[i](X[32 * i:32 * i + 32, :], Y[32 * i:32 * i + 32, :], Z[32 * i:32 * i + 32, :])
''')

TARGETS = ("pto-a2a3sim", "aie-npu1")


def blocked_offsets():
    i, j = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    return (i // 16) * 512 + (i % 16) * 16 + (j // 16) * 256 + j % 16


@pytest.mark.parametrize("target", TARGETS)
def test_a_column_major_operand_is_read_in_its_layout(ctx, program, tmp_path, target):
    rng = np.random.default_rng(10)
    x, y = (rng.standard_normal((32, 64)).astype(np.float32) for _ in range(2))
    pkg = ctx.compile(program.add_colmajor, target=target, out=tmp_path / "pkg", force=True)
    np.testing.assert_array_equal(np.asarray(htp.bind(pkg, ctx).run(X=x, Y=y)["Z"]), x + y)
    if target == "pto-a2a3sim":
        source = (pkg.path / "codegen/pto/kernels/aiv/add_colmajor.cpp").read_text()
        assert "GlobalTensor<float, Shape<1, 1, 1, 32, 64>, Stride<1, 1, 1, 1, 32>, Layout::DN>" in source
        staging = json.loads((pkg.path / "codegen/pto/kernel_registry.json").read_text())["entries"]["add_colmajor"]["staging"]
        assert staging == {"X": {"extents": [32, 64], "strides": [1, 32]}}
    else:
        assert "%arg0[0, 0, 0, 0][1, 1, 64, 32][0, 0, 1, 64]" in (pkg.path / "codegen/aie/add_colmajor/aie.mlir").read_text()


def blocked_add(ctx, kernel, target, tmp_path, seed):
    """Z = X + 2 Y through `kernel` (32x32, a blocked layout), checked against NumPy: (package, X, Y)."""
    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    pkg = ctx.compile(kernel, target=target, out=tmp_path / "pkg", force=True)
    np.testing.assert_array_equal(np.asarray(htp.bind(pkg, ctx).run(X=x, Y=y)["Z"]), x + 2 * y)
    return pkg, x, y


@pytest.mark.parametrize("target", TARGETS)
def test_a_blocked_layout_is_read_and_written_in_its_layout(ctx, program, tmp_path, target):
    pkg, x, y = blocked_add(ctx, program.add_blocked, target, tmp_path, seed=11)
    if target == "pto-a2a3sim":
        # One TLOAD of the whole blocked tensor into the tile's bytes viewed 16 elements a row, the rows walking
        # the block row, the row in the block and the block column.
        source = (pkg.path / "codegen/pto/kernels/aiv/add_blocked.cpp").read_text()
        assert "GlobalTensor<float, Shape<1, 2, 16, 2, 16>, Stride<1, 512, 16, 256, 1>>" in source
        assert "Tile<TileType::Vec, float, 64, 16, BLayout::RowMajor, 64, 16>" in source
        registry = pkg.path / "codegen/pto/kernel_registry.json"
        doc = json.loads(registry.read_text())
        layout = {"extents": [2, 16, 2, 16], "strides": [512, 16, 256, 1]}
        assert doc["entries"]["add_blocked"]["staging"] == {"X": layout, "Z": layout}
        # The kernel really reads global memory in the layout: without the binding's staging the same call
        # reads X's row-major bytes as blocks, and the result is X permuted.
        del doc["entries"]["add_blocked"]["staging"]
        registry.write_text(json.dumps(doc))
        z = np.asarray(htp.bind(pkg, ctx).run(X=x, Y=y, verify=False)["Z"])
        b = blocked_offsets()
        unstaged = np.empty(1024, np.float32)
        unstaged[b.ravel()] = x.ravel()[b.ravel()] + 2 * y.ravel()
        np.testing.assert_array_equal(z.ravel(), unstaged)
        assert not np.array_equal(z, x + 2 * y)
    else:
        text = (pkg.path / "codegen/aie/add_blocked/aie.mlir").read_text()
        assert "%arg0[0, 0, 0, 0][2, 2, 16, 16][512, 16, 32, 1]" in text  # the shim's blocked pattern
        kernel = next((pkg.path / "codegen/aie/add_blocked/kernels").glob("*.cc")).read_text()
        assert "d_X[] = {2, 16, 2, 16}, s_X[] = {512, 16, 256, 1}" in kernel


def test_layouts_backend_pto_cannot_lay_out_are_refused(ctx, program, tmp_path):
    with pytest.raises(htp.CompileError, match=r"the memory layout of 'X' of kernel 'holes' \(strides \[32,1\] over "
                                               r"\[16,16\]\) does not place each element once") as e:
        ctx.compile(program.holes, target="pto-a2a3sim", out=tmp_path / "a", force=True)
    assert "pto.layout-mem" in str(e.value)
    with pytest.raises(htp.CompileError, match=r"the memory layout of 'X' of kernel 'add_colmajor' is global memory's, "
                                               r"but a workload launches the kernel with views of row-major tensors"):
        ctx.compile(program.launches_colmajor, target="pto-a2a3sim", out=tmp_path / "b", force=True)


@pytest.mark.parametrize("target", TARGETS)
def test_a_layout_named_at_module_level_is_the_layout(ctx, program, tmp_path, target):
    # `BLOCKED = Layout.axe(...)` once, `@ BLOCKED` in the signature: capture puts the definition in its place
    # (a name alone carries no arguments), so the kernel gets the blocked layout, not none.
    pkg, _, _ = blocked_add(ctx, program.add_named, target, tmp_path, seed=12)
    if target == "pto-a2a3sim":
        staging = json.loads((pkg.path / "codegen/pto/kernel_registry.json").read_text())["entries"]["add_named"]["staging"]
        assert staging["X"] == {"extents": [2, 16, 2, 16], "strides": [512, 16, 256, 1]}
    else:
        assert "[2, 2, 16, 16][512, 16, 32, 1]" in (pkg.path / "codegen/aie/add_named/aie.mlir").read_text()


def test_a_layout_held_by_a_local_variable_is_refused_naming_it(ctx, program, tmp_path):
    with pytest.raises(htp.CompileError, match=r"enclosing-scope variable 'local' holds layout\.Layout\(\.\.\.\), a "
                                               r"dialect value HTP reads from the source"):
        ctx.compile(program.add_local, target="pto-a2a3sim", out=tmp_path / "pkg", force=True)
