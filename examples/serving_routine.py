"""A decoder step for serving as one CSP megakernel: RMS-normalise the hidden states, project them onto a
vocabulary slice and take the softmax — three processes streaming row tiles through bounded channels.
The same program is compiled once for Ascend (pto-a2a3sim: processes become vector and cube kernels
exchanging ring buffers) and once for AIE (aie-npu1: processes become cores linked by object FIFOs); the
backend is chosen at run time (--target, or HTP_SERVING_TARGET).

    python examples/serving_routine.py --target pto-a2a3sim
    python examples/serving_routine.py --target aie-npu1
"""
import os
import sys

import numpy as np

from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import (Tensor, Tile, In, Out, f32, load, store, mul, muls, adds, rowsum, rsqrt,
                               rowexpand_mul, matmul, exp, rowmax, rowexpand_sub, rowexpand_div)

import htp_example

T, D, V = 64, 64, 32     # tokens in the batch, hidden size, vocabulary slice
ROWS = 16
STEPS = T // ROWS
EPS = 1e-6


@program
def decoder_step(X: In[Tensor[T, D, f32]], W: In[Tensor[D, V, f32]], Y: Out[Tensor[T, V, f32]]):
    normed = Channel[Tile[ROWS, D, f32]](depth=2)
    logits = Channel[Tile[ROWS, V, f32]](depth=2)

    @process(produces=[normed])
    def norm():                                   # vector work
        for i in range(STEPS):
            t = load(X.tile(i, 0, shape=(ROWS, D)))
            inv = rsqrt(adds(muls(rowsum(mul(t, t)), 1.0 / D), EPS))
            send(normed, rowexpand_mul(t, inv))

    @process(consumes=[normed], produces=[logits])
    def project():                                # cube work
        for i in range(STEPS):
            h = recv(normed)
            send(logits, matmul(h, load(W)))

    @process(consumes=[logits])
    def sample():                                 # vector work
        for i in range(STEPS):
            z = recv(logits)
            e = exp(rowexpand_sub(z, rowmax(z)))
            store(Y.tile(i, 0, shape=(ROWS, V)), rowexpand_div(e, rowsum(e)))


def make_inputs(rng):
    return {"X": rng.standard_normal((T, D), dtype="float32"),
            "W": (rng.standard_normal((D, V)) / np.sqrt(D)).astype("float32")}


def reference(X, W):
    h = X / np.sqrt(np.mean(X * X, axis=1, keepdims=True) + EPS)
    z = h @ W
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return {"Y": e / e.sum(axis=1, keepdims=True)}


# The constructs this example runs on every target of ENTRIES (docs/parity.md, scripts/parity_table.py).
PARITY_CONSTRUCTS = ["CSP program (processes, channels)"]

# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": decoder_step, "aie-npu1": decoder_step}


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--target" not in argv and os.environ.get("HTP_SERVING_TARGET"):
        argv = ["--target", os.environ["HTP_SERVING_TARGET"], *argv]
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference,
                             outputs=["Y"], rtol=1e-4, atol=1e-5, description=__doc__, argv=argv))
