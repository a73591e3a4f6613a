"""Views of rank-3 tensors inside kernel bodies, written as docs/dialects/tile.md §2 writes them (`x[b, 0:32, :]`,
leading extents 1): backend-aie addressed such a view as if the tensor were 2-D — the plane index became a row
offset — and returned wrong numbers without a diagnostic (a kernel entry, a kernel launched by a workload); a
streamed kernel entry over rank-3 tensors read its views' shapes out of bounds. Each against NumPy on both
targets."""
from __future__ import annotations

import numpy as np
import pytest

import htp
from htp.dialects.tile import In, Out, Tensor, add, f32, kernel, load, muls, rowsum, store
from htp.dialects.wsp import P, workload

TARGETS = ["pto-a2a3sim", "aie-npu1"]

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_rank3_views_in_kernels_read_and_write_their_planes": [
        ("view of a rank-3 tensor in a kernel (`x[b, 0:32, :]`)", t) for t in ("pto-a2a3sim", "aie-npu1")],
}


@kernel
def pick(x: In[Tensor[3, 16, 32, f32]], y: Out[Tensor[16, 32, f32]]):
    store(y, add(load(x[1, :, :]), load(x[2, 0:16, :])))


@kernel
def heads(x: In[Tensor[4, 16, 64, f32]], y: Out[Tensor[64, 64, f32]]):
    for h in range(4):
        t = load(x[h, 0:16, :])
        store(y[h * 16:h * 16 + 16, :], add(t, t))


@kernel
def per_batch(x: In[Tensor[2, 16, 64, f32]], y: Out[Tensor[2, 16, 64, f32]]):
    for h in range(2):
        store(y[h, :, :], muls(load(x[h, :, :]), h + 1))


@workload
def batches(X: In[Tensor[4, 16, 64, f32]], Y: Out[Tensor[4, 16, 64, f32]]):
    for b in P(2):
        per_batch[b](x=X[b * 2:b * 2 + 2, :, :], y=Y[b * 2:b * 2 + 2, :, :])


# 96 KB of tensors: more than an AIE core holds, so its loop streams one plane per iteration.
@kernel
def planes(x: In[Tensor[4, 32, 64, f32]], y: Out[Tensor[4, 32, 64, f32]], s: Out[Tensor[4, 32, 1, f32]]):
    for h in range(4):
        t = load(x[h, 0:32, :])
        store(y[h, :, :], add(t, t))
        store(s[h, :, :], rowsum(t))


@pytest.mark.parametrize("target", TARGETS)
def test_rank3_views_in_kernels_read_and_write_their_planes(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(55)

    def run(fn, **inputs):
        pkg = ctx.compile(fn, target, tmp_path / fn.__name__)
        return htp.bind(pkg, ctx).run(**inputs)

    x = rng.standard_normal((3, 16, 32), dtype=np.float32)
    np.testing.assert_allclose(run(pick, x=x)["y"], x[1] + x[2], rtol=1e-6)
    x = rng.standard_normal((4, 16, 64), dtype=np.float32)
    np.testing.assert_allclose(run(heads, x=x)["y"], 2 * x.reshape(64, 64), rtol=1e-6)
    X = rng.standard_normal((4, 16, 64), dtype=np.float32)
    np.testing.assert_allclose(run(batches, X=X)["Y"], X * np.array([1, 2, 1, 2], np.float32)[:, None, None], rtol=1e-6)
    x = rng.standard_normal((4, 32, 64), dtype=np.float32)
    r = run(planes, x=x)
    np.testing.assert_allclose(r["y"], 2 * x, rtol=1e-6)
    np.testing.assert_allclose(r["s"], x.sum(2, keepdims=True), rtol=1e-5, atol=1e-5)
