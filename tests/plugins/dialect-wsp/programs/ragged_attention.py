"""Decode attention over variable-length KV: request b has blocks[b] KV blocks starting at row starts[b];
its blocks are visited in order (online softmax), requests are independent."""
from htp.dialects.tile import kernel, Tensor, Scalar, In, InOut, f16, f32, i32, load, store, add, cast
from htp.dialects.wsp import (workload, schedule, P, Ragged, dispatch, affinity, streams, stream_by, buffer,
                              tile)

BLK = 64


@kernel
def attn_block(q: In[Tensor[1, 128, f16]], k: In[Tensor[64, 128, f16]], v: In[Tensor[64, 128, f16]],
               o: InOut[Tensor[1, 128, f32]], j: Scalar[i32]):
    store(o, add(load(o), cast(load(q), f32)))


@workload
def ragged_attention(Q: In[Tensor["B", 128, f16]], K: In[Tensor["S", 128, f16]], V: In[Tensor["S", 128, f16]],
                     O: InOut[Tensor["B", 128, f32]], starts: In[Tensor["B", i32]], blocks: In[Tensor["B", i32]]):
    for b, j in P.seq(Ragged(Q.shape[0], blocks)):
        row = starts[b] + j * BLK
        attn_block[b, j](Q[b:b + 1, :], K[row:row + BLK, :], V[row:row + BLK, :], O[b:b + 1, :], j)


@schedule(ragged_attention)
def ragged_attention_schedule():
    dispatch(affinity("b"))
    streams(2)
    stream_by(lambda b: b % 2)
    tile("b", 2)
    buffer("K", "L1")
    buffer("V", "L1")
