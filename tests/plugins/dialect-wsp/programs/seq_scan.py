"""A sequential scan: block i of the running sum needs the carry left by block i - 1."""
from htp.dialects.tile import kernel, Tensor, In, InOut, Out, f32, load, store, add, colsum
from htp.dialects.wsp import workload, schedule, P, dispatch, work_steal, pipeline, timing, batched

ROWS = 64


@kernel
def scan_step(x: In[Tensor[64, 128, f32]], carry: InOut[Tensor[1, 128, f32]], y: Out[Tensor[64, 128, f32]]):
    store(carry, add(load(carry), colsum(load(x))))
    store(y, load(x))


@workload
def prefix_sum(X: In[Tensor["T", 128, f32]], Y: Out[Tensor["T", 128, f32]]):
    carry: Tensor[1, 128, f32]
    for i in P.seq(X.shape[0] // ROWS):
        scan_step[i](X[i * ROWS:(i + 1) * ROWS, :], carry, Y[i * ROWS:(i + 1) * ROWS, :])


@schedule(prefix_sum)
def prefix_sum_schedule():
    dispatch(work_steal())
    pipeline(2)
    timing(batched(8))
