"""A schedule for a workload whose P.pipe runs over channels."""
from htp.dialects.csp import Channel, recv, send
from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, store
from htp.dialects.wsp import P, dispatch, round_robin, schedule, workload


@kernel
def copy_rows(x: In[Tensor[32, 128, f32]], y: Out[Tensor[32, 128, f32]]):
    store(y, load(x))


@workload
def piped(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    rows = Channel[Tensor[32, 128, f32]](depth=2)
    with P.pipe():
        for i in P.seq(8):
            send(rows, copy_rows[i](X.tile(i, 0)))
        for i in P.seq(8):
            copy_rows[i](recv(rows), Y.tile(i, 0))


@schedule(piped)
def piped_schedule():
    dispatch(round_robin(2))
