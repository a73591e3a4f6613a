"""Tiled GEMM C = A @ B with K-accumulation.

On Ascend (pto-a2a3sim) a WSP workload launches one cube (AIC) task per output tile; each task walks K
in BK steps, accumulating in an f32 tile. On AIE (aie-npu1) the same maths is an SPMD kernel on a 2 x 2
core grid whose operands carry layouts: A @ S(0)R (rows sharded over mesh axis 0, replicated across
axis 1), B @ RS(1), so each core computes its block of C and the layouts drive the object FIFOs.

    python examples/gemm.py --target pto-a2a3sim
    python examples/gemm.py --target aie-npu1
"""
import sys

import numpy as np

from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul, full
from htp.dialects.layout import Layout
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


@kernel(mapping=[2, 2])
def gemm_spmd(A: In[Tensor[M, K, f32] @ Layout("S(0)R")], B: In[Tensor[K, N, f32] @ Layout("RS(1)")],
              C: Out[Tensor[M, N, f32] @ Layout("S(0)S(1)")]):
    acc = full((BM, BN), 0.0, f32)
    for k in range(K // BK):
        acc = matmul(load(A[:, k * BK:(k + 1) * BK]), load(B[k * BK:(k + 1) * BK, :]), acc)
    store(C, acc)


def make_inputs(rng):
    return {"A": rng.standard_normal((M, K), dtype="float32"), "B": rng.standard_normal((K, N), dtype="float32")}


def reference(A, B):
    return {"C": A @ B}


# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": gemm, "aie-npu1": gemm_spmd}


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference,
                             outputs=["C"], rtol=1e-4, atol=1e-3, description=__doc__))
