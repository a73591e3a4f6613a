"""Column softmax with vendor-only pto ops (colmax, colexpand_sub, colsum, recip, colexpand_mul): the tile
dialect types them by the contract classes backend-pto publishes."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32
from htp.dialects.wsp import workload, P
from htp.intrinsics import pto

COLS = 64


@kernel
def colsoftmax_block(x: In[Tensor[32, COLS, f32]], y: Out[Tensor[32, COLS, f32]]):
    t = pto.load(x)
    e = pto.exp(pto.colexpand_sub(t, pto.colmax(t)))
    pto.store(y, pto.colexpand_mul(e, pto.recip(pto.colsum(e))))


@workload
def colsoftmax(X: In[Tensor[32, 256, f32]], Y: Out[Tensor[32, 256, f32]]):
    for j in P(256 // COLS):
        colsoftmax_block[j](X.tile(0, j), Y.tile(0, j))
