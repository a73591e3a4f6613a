# Row softmax of a 128 x 256 matrix, 32 rows per step: numerically stable (subtract the row max).
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, exp, rowmax, rowsum, rowexpand_sub, rowexpand_div


@kernel
def softmax(x: In[Tensor[128, 256, f32]], y: Out[Tensor[128, 256, f32]]):
    for r in range(128 // 32):
        t = load(x.tile(r, 0, shape=(32, 256)))
        m = rowmax(t)
        e = exp(rowexpand_sub(t, m))
        s = rowsum(e)
        store(y.tile(r, 0, shape=(32, 256)), rowexpand_div(e, s))
