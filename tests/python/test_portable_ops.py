"""Portable tile ops that programs needed per target before: column broadcasts (colexpand, colexpand_<op>) and
transpose, lowered by both backends and run on both simulators against NumPy."""

import numpy as np
import pytest

import htp
from htp.dialects.tile import (In, Out, Tensor, add, colexpand, colexpand_add, colexpand_div, colexpand_max,
                               colexpand_mul, colexpand_sub, f32, kernel, load, store, transpose)
from htp.dialects.wsp import P, workload


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
