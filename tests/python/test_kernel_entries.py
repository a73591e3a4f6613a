"""Kernel entries written as docs/dialects/tile.md writes them, with runtime scalars in view offsets: on AIE
such an entry runs as one host-orchestrated task whose objects travel packed in one buffer each way, and a
buffer of 8193 words (two 128 x 32 f32 tensors and a scalar) had no DMA access pattern (aie.dma-pattern); the
buffers are now padded to a length one transfer can move. Both targets against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import htp
from htp.dialects.tile import In, InOut, Scalar, Tensor, adds, f32, i32, kernel, load, store


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
