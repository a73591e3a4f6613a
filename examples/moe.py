"""Mixture of experts: top-k routing as CSR (indptr, indices); every token runs exactly the experts its
routing row selects (P.sel), so the number of tasks is data-dependent and only known at run time. Each
expert is a cube (matmul) task feeding a vector (accumulate) task through a runtime-created intermediate:
on Ascend a kernel runs on one core type.
On AIE (aie-npu1) the workload is host-orchestrated: the task graph is walked at run time, one task
at a time, each kernel a single-core design (docs/backends/aie.md §2).

    python examples/moe.py --target pto-a2a3sim
    python examples/moe.py --target aie-npu1
"""
import sys

import numpy as np

from htp.dialects.tile import kernel, Tensor, In, Out, InOut, f32, i32, load, store, add, matmul
from htp.dialects.wsp import workload, schedule, P, Sparse, dispatch, hash

import htp_example

T, D, E, TOPK = 16, 64, 4, 2
T1, NNZ, ED, TE = T + 1, T * TOPK, E * D, T * E


@kernel
def expert_matmul(x: In[Tensor[1, D, f32]], w: In[Tensor[D, D, f32]], h: Out[Tensor[1, D, f32]]):
    h_tile = matmul(load(x), load(w))   # a cube (AIC) kernel
    store(h, h_tile)


@kernel
def accumulate(h: In[Tensor[1, D, f32]], y: InOut[Tensor[1, D, f32]]):
    store(y, add(load(y), load(h)))     # a vector (AIV) kernel


@workload
def moe(X: In[Tensor[T, D, f32]], W: In[Tensor[ED, D, f32]], Y: InOut[Tensor[T, D, f32]],
        indptr: In[Tensor[T1, i32]], indices: In[Tensor[NNZ, i32]]):
    hidden: Tensor[TE, D, f32]          # one row per (token, expert): created by the runtime
    routing = Sparse(T, indptr, indices)
    for t in P(T):
        for e in P.sel(routing[t]):
            expert_matmul[t, e](X[t:t + 1, :], W[e * D:(e + 1) * D, :], hidden[t * E + e:t * E + e + 1, :])
            accumulate[t, e](hidden[t * E + e:t * E + e + 1, :], Y[t:t + 1, :])


@schedule(moe)
def moe_schedule():
    dispatch(hash("t"))


def make_inputs(rng):
    scores = rng.standard_normal((T, E))
    chosen = np.sort(np.argsort(-scores, axis=1)[:, :TOPK], axis=1)
    # Variable fan-out: every third token keeps only its best expert.
    rows = [chosen[t, :1] if t % 3 == 0 else chosen[t] for t in range(T)]
    indptr = np.zeros(T + 1, dtype=np.int32)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    indices = np.zeros(T * TOPK, dtype=np.int32)
    flat = np.concatenate(rows).astype(np.int32)
    indices[:len(flat)] = flat
    return {"X": rng.standard_normal((T, D), dtype="float32"),
            "W": (rng.standard_normal((E * D, D)) / np.sqrt(D)).astype("float32"),
            "Y": np.zeros((T, D), dtype="float32"), "indptr": indptr, "indices": indices}


def reference(X, W, Y, indptr, indices):
    out = Y.copy()
    for t in range(T):
        for e in indices[indptr[t]:indptr[t + 1]]:
            out[t] += X[t] @ W[e * D:(e + 1) * D]
    return {"Y": out}


# The constructs this example runs on every target of ENTRIES (docs/parity.md, scripts/parity_table.py).
PARITY_CONSTRUCTS = ["CSR selection (`P.sel` over `Sparse`)", "several launches with intermediates",
                     "schedule `dispatch`"]

# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": moe, "aie-npu1": moe}


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference, outputs=["Y"], rtol=1e-4, atol=1e-4,
                             description=__doc__))
