"""Decode attention over variable-length KV (unnormalised): request b visits blocks[b] KV blocks of 16
rows from row starts[b]; per block a cube kernel computes the scores K_blk @ q and a vector kernel adds
sum_r exp(score_r) * V_blk[r] into O[b]."""
from htp.dialects.tile import (kernel, Tensor, In, Out, InOut, f32, i32, load, store, matmul, exp, add, colsum,
                               rowexpand_mul)
from htp.dialects.wsp import workload, schedule, P, Ragged, dispatch, hash

BLK = 16
D = 64


@kernel
def scores(k: In[Tensor[BLK, D, f32]], qt: In[Tensor[D, 1, f32]], s: Out[Tensor[BLK, 1, f32]]):
    store(s, matmul(load(k), load(qt)))


@kernel
def accumulate(s: In[Tensor[BLK, 1, f32]], v: In[Tensor[BLK, D, f32]], o: InOut[Tensor[1, D, f32]]):
    p = exp(load(s))
    store(o, add(load(o), colsum(rowexpand_mul(load(v), p))))


@workload
def ragged_decode(QT: In[Tensor[D, "B", f32]], K: In[Tensor["S", D, f32]], V: In[Tensor["S", D, f32]],
                  O: InOut[Tensor["B", D, f32]], starts: In[Tensor["B", i32]], blocks: In[Tensor["B", i32]]):
    S: Tensor[BLK, 1, f32]
    for b, j in P.seq(Ragged(O.shape[0], blocks)):
        row = starts[b] + j * BLK
        scores[b, j](K[row:row + BLK, :], QT[:, b:b + 1], S)
        accumulate[b, j](S, V[row:row + BLK, :], O[b:b + 1, :])


@schedule(ragged_decode)
def ragged_decode_schedule():
    dispatch(hash("b"))
