# Scalars, constexprs, rank-3 and 1-D views, InOut, scalar registers, static and runtime conditions.
from htp.dialects.tile import *

C = 64
SCALE = 0.5


@kernel
def features(x: In[Tensor[4, 32, C, f32]], v: In[Tensor[C, f16]], y: InOut[Tensor[32, C, f32]], n: Scalar[i32],
             T: Constexpr[int], K: Constexpr = 2):
    """Exercises the parts of the surface the other programs do not."""
    acc: Tile[32, C, f32] = full((32, C), 0.0)
    for b in range(K):
        acc = add(acc, load(x[b, :, :]))
    if K > 1:
        acc = muls(acc, SCALE)
    else:
        acc = exp(acc)
    h = cast(load(v), f32)
    s = 0
    for i in range(n):
        s += 2
        if i < T:
            store(y[i % 32:i % 32 + 1, :], h)
    r = rowexpand(rowsum(acc), (32, C))
    prev = load(y)
    store(y, add(prev, maxs(r, s)))
    store(y.tile(0, 0, shape=(32, C)), relu(acc))
