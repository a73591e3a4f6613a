"""Stitching: a workload launches two others; their task sets join one graph (combine: unordered), with
the callee's tensors and scalars bound to the caller's."""
from htp.dialects.tile import kernel, Tensor, InOut, f32, load, store, add
from htp.dialects.wsp import workload, schedule, P, combine, dispatch, round_robin


@kernel
def bump(x: InOut[Tensor[16, 64, f32]]):
    store(x, add(load(x), load(x)))


@workload
def bump_rows(X: InOut[Tensor["R", 64, f32]], n: int):
    for r in P.seq(n):
        bump[r](X[r * 16:r * 16 + 16, :])


@workload
def stitched(A: InOut[Tensor[128, 64, f32]], B: InOut[Tensor[64, 64, f32]]):
    combine(bump_rows(A, A.shape[0] // 16), bump_rows(X=B, n=2))


@schedule(stitched)
def stitched_schedule():
    dispatch(round_robin(2))
