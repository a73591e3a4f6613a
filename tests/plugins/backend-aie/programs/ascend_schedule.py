"""A schedule written for Ascend: work stealing between AICPU schedulers and issue streams have no meaning on
a spatial AIE mapping (each grid point owns a core), so backend-aie accepts them and says, in a note, that
they have no effect; the task window holds (4 cores run at once): the program compiles for both vendors
unchanged."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects.wsp import workload, schedule, P, dispatch, work_steal, streams, stream_by, task_window

M, N = 128, 64
TM = 16


@kernel
def add_tile(x: In[Tensor[TM, N, f32]], y: In[Tensor[TM, N, f32]], z: Out[Tensor[TM, N, f32]]):
    store(z, add(load(x), load(y)))


@workload
def vadd(A: In[Tensor[M, N, f32]], B: In[Tensor[M, N, f32]], C: Out[Tensor[M, N, f32]]):
    for i in P(4):
        for s in P.seq(2):
            add_tile(A.tile(i * 2 + s, 0), B.tile(i * 2 + s, 0), C.tile(i * 2 + s, 0))


@schedule(vadd)
def vadd_schedule():
    dispatch(work_steal())
    streams(2)
    stream_by(lambda i: i % 2)
    task_window(8)
