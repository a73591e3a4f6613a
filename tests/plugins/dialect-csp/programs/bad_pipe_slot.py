"""Pipe stages that bind channels wrongly: a launch sent on a channel that leaves no parameter for the slot
and an item passed to a parameter of another shape."""
from htp.dialects.csp import Channel, recv, send
from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, store
from htp.dialects.wsp import P, workload


@kernel
def copy_rows(x: In[Tensor[32, 128, f32]], y: Out[Tensor[32, 128, f32]]):
    store(y, load(x))


@kernel
def half_rows(x: In[Tensor[16, 128, f32]], y: Out[Tensor[16, 128, f32]]):
    store(y, load(x))


@workload
def miswired(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    rows = Channel[Tensor[32, 128, f32]](depth=2)
    with P.pipe():
        for i in P.seq(8):
            send(rows, copy_rows[i](X.tile(i, 0), Y.tile(i, 0)))
        for i in P.seq(8):
            half_rows[i](recv(rows), Y.tile(i, 0))
