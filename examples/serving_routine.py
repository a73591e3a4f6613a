"""A decoder step for serving, composed from the kernels of the other examples: RMS-normalise the hidden
states, project them (tiled GEMM with K-accumulation) and take a softmax over the vocabulary slice.
The same program is compiled once for Ascend (pto-a2a3sim) and once for AIE (aie-npu1); the backend is
chosen at run time (--target, or HTP_SERVING_TARGET), and the package for each target is kept.

    python examples/serving_routine.py --target pto-a2a3sim
"""
import os
import sys

import numpy as np

from htp.dialects.tile import (kernel, Tensor, In, Out, f32, load, store, mul, muls, adds, rowsum, rsqrt,
                               rowexpand_mul, matmul, full, exp, rowmax, rowexpand_sub, rowexpand_div)
from htp.dialects.wsp import workload, P

import htp_example

T, D, V = 32, 64, 64     # tokens in the batch, hidden size, vocabulary slice
ROWS = 16
EPS = 1e-6


@kernel
def norm_rows(x: In[Tensor[ROWS, D, f32]], h: Out[Tensor[ROWS, D, f32]]):
    t = load(x)
    inv = rsqrt(adds(muls(rowsum(mul(t, t)), 1.0 / D), EPS))
    store(h, rowexpand_mul(t, inv))


@kernel
def project(h: In[Tensor[ROWS, D, f32]], w: In[Tensor[D, V, f32]], z: Out[Tensor[ROWS, V, f32]]):
    acc = full((ROWS, V), 0.0, f32)
    for k in range(D // 32):
        acc = matmul(load(h[:, k * 32:(k + 1) * 32]), load(w[k * 32:(k + 1) * 32, :]), acc)
    store(z, acc)


@kernel
def softmax_rows(z: In[Tensor[ROWS, V, f32]], y: Out[Tensor[ROWS, V, f32]]):
    t = load(z)
    e = exp(rowexpand_sub(t, rowmax(t)))
    store(y, rowexpand_div(e, rowsum(e)))


@workload
def decoder_step(X: In[Tensor[T, D, f32]], W: In[Tensor[D, V, f32]], Hn: Out[Tensor[T, D, f32]],
                 Y: Out[Tensor[T, V, f32]]):
    logits: Tensor[T, V, f32]
    for i in P(T // ROWS):
        norm_rows[i](X.tile(i, 0), Hn.tile(i, 0))
    for i in P(T // ROWS):
        project[i](Hn.tile(i, 0), W, logits.tile(i, 0))
    for i in P(T // ROWS):
        softmax_rows[i](logits.tile(i, 0), Y.tile(i, 0))


def make_inputs(rng):
    return {"X": rng.standard_normal((T, D), dtype="float32"),
            "W": (rng.standard_normal((D, V)) / np.sqrt(D)).astype("float32")}


def reference(X, W):
    h = X / np.sqrt(np.mean(X * X, axis=1, keepdims=True) + EPS)
    z = h @ W
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return {"Hn": h, "Y": e / e.sum(axis=1, keepdims=True)}


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--target" not in argv and os.environ.get("HTP_SERVING_TARGET"):
        argv = ["--target", os.environ["HTP_SERVING_TARGET"], *argv]
    sys.exit(htp_example.run({"pto-a2a3sim": decoder_step, "aie-npu1": decoder_step}, make_inputs, reference,
                             outputs=["Hn", "Y"], rtol=1e-4, atol=1e-5, description=__doc__, argv=argv))
