"""Elementwise C = A + B over a 2-D grid of 32 x 128 tiles (8 x 4 independent tasks)."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects.wsp import workload, schedule, P, dispatch, round_robin, timing, immediate, task_window

M, N = 256, 512


@kernel
def add_tile(x: In[Tensor[32, 128, f32]], y: In[Tensor[32, 128, f32]], z: Out[Tensor[32, 128, f32]]):
    store(z, add(load(x), load(y)))


@workload
def vadd(A: In[Tensor[M, N, f32]], B: In[Tensor[M, N, f32]], C: Out[Tensor[M, N, f32]]):
    for i, j in P(M // 32, N // 128):
        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def vadd_schedule():
    dispatch(round_robin(4))
    timing(immediate)
    task_window(64)
