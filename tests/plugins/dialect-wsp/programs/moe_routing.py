"""MoE routing: every token runs the experts its CSR routing row selects (variable count per token)."""
from htp.dialects.tile import kernel, Tensor, In, InOut, f32, i32, load, store, add, matmul
from htp.dialects.wsp import workload, schedule, P, Sparse, dispatch, hash, streams, stream_by

EXPERTS = 8


@kernel
def expert_ffn(x: In[Tensor[1, 256, f32]], w: In[Tensor[256, 256, f32]], y: InOut[Tensor[1, 256, f32]]):
    store(y, add(load(y), matmul(load(x), load(w))))


@workload
def moe(X: In[Tensor["T", 256, f32]], W: In[Tensor[EXPERTS, 256, 256, f32]], Y: InOut[Tensor["T", 256, f32]],
        indptr: In[Tensor["T1", i32]], indices: In[Tensor["NNZ", i32]]):
    routing = Sparse(X.shape[0], indptr, indices)
    for t in P(X.shape[0]):
        for e in P.sel(routing[t]):
            expert_ffn[t, e](X[t:t + 1, :], W[e], Y[t:t + 1, :])


@schedule(moe)
def moe_schedule():
    dispatch(hash("t"))
    streams(4)
    stream_by(lambda e: e % 4)
