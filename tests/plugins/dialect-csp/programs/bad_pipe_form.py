"""A workload with channels whose body holds a launch outside its pipe, and one whose pipe stage sends from
a parallel loop."""
from htp.dialects.csp import Channel, recv, send
from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, store
from htp.dialects.wsp import P, workload


@kernel
def copy_rows(x: In[Tensor[32, 128, f32]], y: Out[Tensor[32, 128, f32]]):
    store(y, load(x))


@workload
def loose(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    rows = Channel[Tensor[32, 128, f32]](depth=2)
    copy_rows[0](X.tile(0, 0), Y.tile(0, 0))
    with P.pipe():
        for i in P.seq(8):
            send(rows, copy_rows[i](X.tile(i, 0)))
        for i in P.seq(8):
            copy_rows[i](recv(rows), Y.tile(i, 0))


@workload
def unordered(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    rows = Channel[Tensor[32, 128, f32]](depth=2)
    with P.pipe():
        for i in P(8):
            send(rows, copy_rows[i](X.tile(i, 0)))
        for i in P.seq(8):
            copy_rows[i](recv(rows), Y.tile(i, 0))
