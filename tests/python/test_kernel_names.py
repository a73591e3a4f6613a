"""Kernels named like functions of the C and C++ libraries their generated sources include (`fma`, `exp`,
`memcpy`, `sqrtf`) or like keywords: the docs put no limit on kernel names, but backend-aie's kernel sources
declared an extern "C" function of that name, which conflicts with <cmath>'s (the aie-sim build failed on
`fma`). Their symbols are now htp_<name>; each runs on both targets against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import htp
from htp.dialects.tile import In, Out, Tensor, add, exp, f32, kernel, load, mul, muls, store
from htp.dialects.wsp import P, workload

TARGETS = ["pto-a2a3sim", "aie-npu1"]


@kernel
def fma(x: In[Tensor[32, 64, f32]], w: In[Tensor[32, 64, f32]], y: Out[Tensor[32, 64, f32]]):
    store(y, add(mul(load(x), load(w)), load(x)))


@kernel
def sqrtf(x: In[Tensor[32, 64, f32]], y: Out[Tensor[32, 64, f32]]):
    store(y, exp(load(x)))


@kernel
def memcpy(x: In[Tensor[32, 64, f32]], y: Out[Tensor[32, 64, f32]]):
    store(y, muls(load(x), 3.0))


@workload
def fma_all(X: In[Tensor[64, 128, f32]], W: In[Tensor[32, 64, f32]], Y: Out[Tensor[64, 128, f32]]):
    T: Tensor[64, 128, f32]
    U: Tensor[64, 128, f32]
    for b, h in P(2, 2):
        fma[b, h](X.tile(b, h), W, T.tile(b, h))
        sqrtf[b, h](T.tile(b, h), U.tile(b, h))
        memcpy[b, h](U.tile(b, h), Y.tile(b, h))


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_named_like_library_functions_run(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(16)
    X = (rng.standard_normal((64, 128)) * 0.5).astype(np.float32)
    W = (rng.standard_normal((32, 64)) * 0.5).astype(np.float32)
    pkg = ctx.compile(fma_all, target, tmp_path / "all")
    r = htp.bind(pkg, ctx).run(X=X, W=W)
    np.testing.assert_allclose(r["Y"], 3 * np.exp(X * np.tile(W, (2, 2)) + X), rtol=1e-5)
    x = X[:32, :64].copy()
    pkg = ctx.compile(fma, target, tmp_path / "entry")  # a kernel entry of that name
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(x=x, w=x)["y"], x * x + x, rtol=1e-6)
    if target == "aie-npu1":
        assert "func.func private @htp_fma(" in (pkg.path / "codegen/aie/fma/aie.mlir").read_text()
