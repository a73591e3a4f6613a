# RMS normalisation of 64 rows of 128: y = x / sqrt(mean(x^2) + eps), 16 rows per step.
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, mul, muls, adds, rowsum, rsqrt, rowexpand_mul

M = 64
D = 128
ROWS = 16
EPS = 1e-6


@kernel
def rmsnorm(x: In[Tensor[M, D, f32]], y: Out[Tensor[M, D, f32]]):
    for i in range(M // ROWS):
        t = load(x[i * ROWS:(i + 1) * ROWS, :])
        ms = muls(rowsum(mul(t, t)), 1.0 / D)
        inv = rsqrt(adds(ms, EPS))
        store(y[i * ROWS:(i + 1) * ROWS, :], rowexpand_mul(t, inv))
