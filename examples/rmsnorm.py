"""RMS normalisation y = x / sqrt(mean(x^2) + eps) * g, one 16-row tile per task.

    python examples/rmsnorm.py --target pto-a2a3sim
"""
import sys

import numpy as np

from htp.dialects.tile import (kernel, Tensor, In, Out, f32, load, store, mul, muls, adds, rowsum, rsqrt,
                               rowexpand_mul)
from htp.dialects.wsp import workload, P

import htp_example

M, D, ROWS = 64, 64, 16
EPS = 1e-6


@kernel
def rmsnorm_rows(x: In[Tensor[ROWS, D, f32]], g: In[Tensor[ROWS, D, f32]], y: Out[Tensor[ROWS, D, f32]]):
    t = load(x)
    ms = muls(rowsum(mul(t, t)), 1.0 / D)
    inv = rsqrt(adds(ms, EPS))
    store(y, mul(rowexpand_mul(t, inv), load(g)))


@workload
def rmsnorm(X: In[Tensor[M, D, f32]], G: In[Tensor[ROWS, D, f32]], Y: Out[Tensor[M, D, f32]]):
    for i in P(M // ROWS):
        rmsnorm_rows[i](X.tile(i, 0), G, Y.tile(i, 0))


def make_inputs(rng):
    g = rng.uniform(0.5, 1.5, (1, D)).astype("float32")
    return {"X": rng.standard_normal((M, D), dtype="float32"), "G": np.repeat(g, ROWS, axis=0)}


def reference(X, G):
    return {"Y": X / np.sqrt(np.mean(X * X, axis=1, keepdims=True) + EPS) * G[0]}


# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": rmsnorm, "aie-npu1": rmsnorm}


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference,
                             outputs=["Y"], rtol=1e-4, atol=1e-5, description=__doc__))
