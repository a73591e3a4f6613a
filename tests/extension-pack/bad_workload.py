"""A WSP workload: cpu-ref does not accept Uses.Dialect(name=wsp), so the resolver rejects it."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store
from htp.dialects.wsp import workload, P


@kernel
def copy_tile(x: In[Tensor[32, 128, f32]], y: Out[Tensor[32, 128, f32]]):
    store(y, load(x))


@workload
def copy_all(X: In[Tensor[64, 128, f32]], Y: Out[Tensor[64, 128, f32]]):
    for i in P(2):
        copy_tile[i](X.tile(i, 0), Y.tile(i, 0))
