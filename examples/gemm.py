"""Tiled GEMM C = A @ B with K-accumulation, one program for both targets.

A WSP workload launches one kernel per output tile; each walks K in BK steps, accumulating in an f32
tile. On Ascend (pto-a2a3sim) every launch is a cube (AIC) task; on AIE (aie-npu1) the launches map onto
compute cores fed by object FIFOs. The same GEMM written as an SPMD kernel with layouts is
examples/gemm_layouts.py.

    python examples/gemm.py --target pto-a2a3sim
    python examples/gemm.py --target aie-npu1
"""
import sys

import numpy as np

from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul, full
from htp.dialects.wsp import workload, P

import htp_example

M, N, K = 64, 64, 128
BM, BN, BK = 32, 32, 32


@kernel
def gemm_tile(a: In[Tensor[BM, K, f32]], b: In[Tensor[K, BN, f32]], c: Out[Tensor[BM, BN, f32]]):
    acc = full((BM, BN), 0.0, f32)
    for k in range(K // BK):
        acc = matmul(load(a[:, k * BK:(k + 1) * BK]), load(b[k * BK:(k + 1) * BK, :]), acc)
    store(c, acc)


@workload
def gemm(A: In[Tensor[M, K, f32]], B: In[Tensor[K, N, f32]], C: Out[Tensor[M, N, f32]]):
    for i, j in P(M // BM, N // BN):
        gemm_tile[i, j](A[i * BM:(i + 1) * BM, :], B[:, j * BN:(j + 1) * BN], C.tile(i, j))


def make_inputs(rng):
    return {"A": rng.standard_normal((M, K), dtype="float32"), "B": rng.standard_normal((K, N), dtype="float32")}


def reference(A, B):
    return {"C": A @ B}


# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": gemm, "aie-npu1": gemm}


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference,
                             outputs=["C"], rtol=1e-4, atol=1e-3, description=__doc__))
