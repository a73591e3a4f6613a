"""MoE routing with P.sel: token t runs the experts its CSR routing row selects, Y[t] += relu(X[t] * W[e])."""
from htp.dialects.tile import kernel, Tensor, In, InOut, f32, i32, load, store, add, mul, relu
from htp.dialects.wsp import workload, schedule, P, Sparse, dispatch, work_steal

E = 8
D = 64


@kernel
def expert_gate(x: In[Tensor[1, D, f32]], w: In[Tensor[1, D, f32]], y: InOut[Tensor[1, D, f32]]):
    store(y, add(load(y), relu(mul(load(x), load(w)))))


@workload
def moe(X: In[Tensor["T", D, f32]], W: In[Tensor[E, D, f32]], Y: InOut[Tensor["T", D, f32]],
        indptr: In[Tensor["T1", i32]], indices: In[Tensor["NNZ", i32]]):
    routing = Sparse(X.shape[0], indptr, indices)
    for t in P(X.shape[0]):
        for e in P.sel(routing[t]):
            expert_gate[t, e](X[t:t + 1, :], W[e:e + 1, :], Y[t:t + 1, :])


@schedule(moe)
def moe_schedule():
    dispatch(work_steal())
