"""Row softmax, numerically stable (subtract the row max), one 16-row tile per task.

    python examples/softmax.py --target pto-a2a3sim
"""
import sys

import numpy as np

from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, exp, rowmax, rowsum, rowexpand_sub, rowexpand_div
from htp.dialects.wsp import workload, P

import htp_example

M, N, ROWS = 64, 128, 16


@kernel
def softmax_rows(x: In[Tensor[ROWS, N, f32]], y: Out[Tensor[ROWS, N, f32]]):
    t = load(x)
    e = exp(rowexpand_sub(t, rowmax(t)))
    store(y, rowexpand_div(e, rowsum(e)))


@workload
def softmax(X: In[Tensor[M, N, f32]], Y: Out[Tensor[M, N, f32]]):
    for i in P(M // ROWS):
        softmax_rows[i](X.tile(i, 0), Y.tile(i, 0))


def make_inputs(rng):
    return {"X": (3 * rng.standard_normal((M, N))).astype("float32")}


def reference(X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return {"Y": e / e.sum(axis=1, keepdims=True)}


# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": softmax, "aie-npu1": softmax}


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference,
                             outputs=["Y"], rtol=1e-4, atol=1e-6, description=__doc__))
