"""A WSP workload over a runtime-sized tensor for the cpu-ref task-graph emission: even row tiles get
ext.axpby(x, y, 3, -1), odd ones x / 2, chosen per task at run time (P.when)."""
from htp.dialects.tile import kernel, Tile, Tensor, In, Out, f32, load, store, muls
from htp.dialects.wsp import workload, P
from htp.dialects.ext import axpby


@kernel
def axpby_tile(x: In[Tensor[16, 128, f32]], y: In[Tensor[16, 128, f32]], z: Out[Tensor[16, 128, f32]]):
    t: Tile[16, 128, f32] = axpby(load(x), load(y), 3.0, -1.0)
    store(z, t)


@kernel
def scale_tile(x: In[Tensor[16, 128, f32]], z: Out[Tensor[16, 128, f32]]):
    store(z, muls(load(x), 0.5))


@workload
def alternate(X: In[Tensor["B", 128, f32]], Y: In[Tensor["B", 128, f32]], Z: Out[Tensor["B", 128, f32]]):
    for i in P(X.shape[0] // 16):
        with P.when(i % 2 == 0):
            axpby_tile[i](X.tile(i, 0), Y.tile(i, 0), Z.tile(i, 0))
        with P.otherwise():
            scale_tile[i](X.tile(i, 0), Z.tile(i, 0))
