"""A kernel over a rank-3 tensor as its own entry: Y = sum of the 4 slices X[b] (views x[b, :, :])."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add, full

B = 4


@kernel
def slice_sum(x: In[Tensor[B, 32, 64, f32]], y: Out[Tensor[32, 64, f32]]):
    acc = full((32, 64), 0.0)
    for b in range(B):
        acc = add(acc, load(x[b, :, :]))
    store(y, acc)
