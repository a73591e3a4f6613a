"""RMS normalisation y = x / sqrt(mean(x^2) + eps) of a runtime number of rows, 16 rows per task."""
from htp.dialects.tile import kernel, Tensor, Scalar, In, Out, f32, load, store, mul, muls, adds, rowsum, rsqrt, rowexpand_mul
from htp.dialects.wsp import workload, schedule, P, dispatch, affinity

ROWS = 16
D = 128


@kernel
def rms_rows(x: In[Tensor[ROWS, D, f32]], y: Out[Tensor[ROWS, D, f32]], eps: Scalar[f32]):
    t = load(x)
    ms = muls(rowsum(mul(t, t)), 1.0 / D)
    store(y, rowexpand_mul(t, rsqrt(adds(ms, eps))))


@workload
def rmsnorm(X: In[Tensor["R", D, f32]], Y: Out[Tensor["R", D, f32]], eps: Scalar[f32]):
    for i in P(X.shape[0] // ROWS):
        rms_rows[i](X[i * ROWS:(i + 1) * ROWS, :], Y[i * ROWS:(i + 1) * ROWS, :], eps)


@schedule(rmsnorm)
def rmsnorm_schedule():
    dispatch(affinity("i"))
