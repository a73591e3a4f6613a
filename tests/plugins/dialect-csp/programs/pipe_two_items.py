"""A pipe whose stages move two items of one channel per iteration (valid CSP; backend-pto gives each
iteration one slot of a channel, so it rejects the stage)."""
from htp.dialects.csp import Channel, recv, send
from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, store
from htp.dialects.wsp import P, workload


@kernel
def copy_rows(x: In[Tensor[32, 128, f32]], y: Out[Tensor[32, 128, f32]]):
    store(y, load(x))


@workload
def pairs(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    rows = Channel[Tensor[32, 128, f32]](depth=2)
    with P.pipe():
        for i in P.seq(4):
            send(rows, copy_rows[i](X.tile(2 * i, 0)))
            send(rows, copy_rows[i](X.tile(2 * i + 1, 0)))
        for i in P.seq(4):
            copy_rows[i](recv(rows), Y.tile(2 * i, 0))
            copy_rows[i](recv(rows), Y.tile(2 * i + 1, 0))
