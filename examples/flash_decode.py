"""Flash decoding: attention of one new token per request over a KV cache whose length varies by request.

* Grouped-query attention: the H query heads of a request share one KV head (q is an H x D tile).
* Request b has blocks[b] KV blocks of BLK keys starting at column starts[b] of the transposed key cache KT
  (and row starts[b] of V): the `Ragged(B, blocks)` axis, expanded at run time by the orchestration.
* Tiers (P.when): a request with a single block is computed directly, normalised, by `attn_single`;
  longer ones are split by KV block — each block's tasks write a partial output, its row maxima and row
  sums (split-KV) — and `merge` combines the partials with the log-sum-exp correction.
* On Ascend a kernel runs on one core type: Q K^T and P V are cube (AIC) kernels, the softmax parts and
  the merge vector (AIV) kernels; they exchange runtime-created intermediates. M_part arrives filled
  with -1e30 so that block slots a request does not use weigh nothing in the merge.
* On AIE (aie-npu1) the workload is host-orchestrated: the ragged domain, the tiers and the views are
  evaluated at run time, one task at a time, each kernel a single-core design (docs/backends/aie.md §2).

    python examples/flash_decode.py --target pto-a2a3sim
    python examples/flash_decode.py --target aie-npu1
"""
import sys

import numpy as np

from htp.dialects.tile import (kernel, Tensor, In, Out, InOut, f32, i32, load, store, matmul, muls, exp, sub,
                               mul, add, rowmax, rowsum, rowexpand_sub, rowexpand_mul, rowexpand_div, full)
from htp.dialects.wsp import workload, schedule, P, Ragged, dispatch, affinity

import htp_example

B, H, D = 4, 16, 64          # requests, query heads per KV head, head dimension
BLK, MAXBLK = 32, 8          # keys per KV block, blocks per request at most
S = B * MAXBLK * BLK         # KV cache rows
SCALE = 1.0 / 8.0            # 1 / sqrt(D)
NEG = -1.0e30                # "minus infinity" for empty split slots
BH, PH = B * H, MAXBLK * H   # query rows of all requests; partial rows of one request
BPH = B * PH                 # partial rows of all requests


@kernel
def scores(q: In[Tensor[H, D, f32]], kt: In[Tensor[D, BLK, f32]], s: Out[Tensor[H, BLK, f32]]):
    s_tile = matmul(load(q), load(kt))                     # cube (AIC): S = Q K^T
    store(s, s_tile)


@kernel
def weigh(v_in: In[Tensor[H, BLK, f32]], v: In[Tensor[BLK, D, f32]], o: Out[Tensor[H, D, f32]]):
    o_tile = matmul(load(v_in), load(v))                   # cube (AIC): O = P V
    store(o, o_tile)


@kernel
def block_softmax(s: In[Tensor[H, BLK, f32]], p: Out[Tensor[H, BLK, f32]], m_part: Out[Tensor[H, 1, f32]],
                  l_part: Out[Tensor[H, 1, f32]]):
    t = muls(load(s), SCALE)                               # vector (AIV): the block's softmax numerator
    m = rowmax(t)
    e = exp(rowexpand_sub(t, m))
    store(p, e)
    store(m_part, m)
    store(l_part, rowsum(e))


@kernel
def full_softmax(s: In[Tensor[H, BLK, f32]], p: Out[Tensor[H, BLK, f32]]):
    t = muls(load(s), SCALE)                               # vector (AIV): a single block, normalised
    e = exp(rowexpand_sub(t, rowmax(t)))
    store(p, rowexpand_div(e, rowsum(e)))


@kernel
def merge(o_part: In[Tensor[PH, D, f32]], m_part: In[Tensor[H, MAXBLK, f32]],
          l_part: In[Tensor[H, MAXBLK, f32]], o: Out[Tensor[H, D, f32]]):
    m = rowmax(load(m_part))
    acc = full((H, D), 0.0, f32)
    total = full((H, 1), 0.0, f32)
    for j in range(MAXBLK):
        w = exp(sub(load(m_part[:, j:j + 1]), m))
        total = add(total, mul(w, load(l_part[:, j:j + 1])))
        acc = add(acc, rowexpand_mul(load(o_part[j * H:(j + 1) * H, :]), w))
    store(o, rowexpand_div(acc, total))


@workload
def flash_decode(Q: In[Tensor[BH, D, f32]], KT: In[Tensor[D, S, f32]], V: In[Tensor[S, D, f32]],
                 starts: In[Tensor[B, i32]], blocks: In[Tensor[B, i32]], O: Out[Tensor[BH, D, f32]],
                 M_part: InOut[Tensor[BH, MAXBLK, f32]]):
    S_buf: Tensor[BPH, BLK, f32]       # scores of every (request, block), created by the runtime
    P_buf: Tensor[BPH, BLK, f32]       # softmax numerators
    O_part: Tensor[BPH, D, f32]        # partial outputs
    L_part: Tensor[BH, MAXBLK, f32]    # partial row sums (empty slots: weight exp(NEG - m) = 0)
    for b, j in P(Ragged(B, blocks)):
        with P.when(blocks[b] > 1):
            col = starts[b] + j * BLK
            row = (b * MAXBLK + j) * H
            scores[b, j](Q[b * H:(b + 1) * H, :], KT[:, col:col + BLK], S_buf[row:row + H, :])
            block_softmax[b, j](S_buf[row:row + H, :], P_buf[row:row + H, :], M_part[b * H:(b + 1) * H, j:j + 1],
                                L_part[b * H:(b + 1) * H, j:j + 1])
            weigh[b, j](P_buf[row:row + H, :], V[col:col + BLK, :], O_part[row:row + H, :])
    for b in P(B):
        with P.when(blocks[b] <= 1):
            row = b * MAXBLK * H
            scores[b](Q[b * H:(b + 1) * H, :], KT[:, starts[b]:starts[b] + BLK], S_buf[row:row + H, :])
            full_softmax[b](S_buf[row:row + H, :], P_buf[row:row + H, :])
            weigh[b](P_buf[row:row + H, :], V[starts[b]:starts[b] + BLK, :], O[b * H:(b + 1) * H, :])
        with P.otherwise():
            merge[b](O_part[b * MAXBLK * H:(b + 1) * MAXBLK * H, :], M_part[b * H:(b + 1) * H, :],
                     L_part[b * H:(b + 1) * H, :], O[b * H:(b + 1) * H, :])


@schedule(flash_decode)
def flash_decode_schedule():
    dispatch(affinity("b"))


def make_inputs(rng):
    blocks = np.array([1, 3, 4, 2], dtype=np.int32)[:B]
    starts = (np.arange(B) * MAXBLK * BLK).astype(np.int32)
    return {"Q": rng.standard_normal((B * H, D), dtype="float32"),
            "KT": rng.standard_normal((D, S), dtype="float32"),
            "V": rng.standard_normal((S, D), dtype="float32"),
            "starts": starts, "blocks": blocks,
            "M_part": np.full((B * H, MAXBLK), NEG, np.float32)}


def reference(Q, KT, V, starts, blocks, **_):
    out = np.zeros((B * H, D), np.float32)
    for b in range(B):
        n = int(blocks[b]) * BLK
        k = KT[:, starts[b]:starts[b] + n]
        s = Q[b * H:(b + 1) * H] @ k * SCALE
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out[b * H:(b + 1) * H] = (p / p.sum(axis=1, keepdims=True)) @ V[starts[b]:starts[b] + n]
    return {"O": out}


# The constructs this example runs on every target of ENTRIES (docs/parity.md, scripts/parity_table.py).
PARITY_CONSTRUCTS = ["ragged domain (`Ragged`)", "`P.when` on tensor elements", "view offset read from a tensor (block table)",
                     "several launches with intermediates", "schedule `dispatch`"]

# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": flash_decode, "aie-npu1": flash_decode}


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference, outputs=["O"],
                             rtol=1e-3, atol=1e-4, description=__doc__))
