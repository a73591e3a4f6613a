"""Kernels named like functions of the C and C++ libraries their generated sources include (`fma`, `exp`,
`memcpy`, `sqrtf`) or like keywords: the docs put no limit on kernel names, but backend-aie's kernel sources
declared an extern "C" function of that name, which conflicts with <cmath>'s (the aie-sim build failed on
`fma`). Their symbols are now htp_<name>. Worse, a kernel named like a C library function the process has
(`write`, `step`, `kill`) was called as that function by aie-sim's kernel library — outputs left unwritten
(zeros) or a crash; the library now binds calls to its own kernels. Each runs on both targets against NumPy."""
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


@kernel
def write(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    store(y, muls(load(x), 2.0))


@kernel
def step(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    store(y, add(load(x), load(x)))


@kernel
def kill(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    store(y, exp(load(x)))


@workload
def posix_names(X: In[Tensor[64, 64, f32]], Y: Out[Tensor[64, 64, f32]]):
    T: Tensor[64, 64, f32]
    U: Tensor[64, 64, f32]
    for i in P(4):
        write[i](X.tile(i, 0), T.tile(i, 0))
        step[i](T.tile(i, 0), U.tile(i, 0))
        kill[i](U.tile(i, 0), Y.tile(i, 0))


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_named_like_process_functions_compute_their_outputs(tmp_path, target):
    ctx = htp.Context()
    x = (np.random.default_rng(17).standard_normal((64, 64)) * 0.25).astype(np.float32)
    pkg = ctx.compile(posix_names, target, tmp_path / "pkg")
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=x)["Y"], np.exp(4 * x), rtol=1e-5)
