"""Row softmax of a 64 x 256 matrix, 8 rows per task."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, exp, rowmax, rowsum, rowexpand_sub, rowexpand_div
from htp.dialects.wsp import workload, P

ROWS = 8


@kernel
def softmax_rows(x: In[Tensor[ROWS, 256, f32]], y: Out[Tensor[ROWS, 256, f32]]):
    t = load(x)
    e = exp(rowexpand_sub(t, rowmax(t)))
    store(y, rowexpand_div(e, rowsum(e)))


@workload
def softmax(X: In[Tensor[64, 256, f32]], Y: Out[Tensor[64, 256, f32]]):
    for i in P(64 // ROWS):
        softmax_rows[i](X.tile(i, 0), Y.tile(i, 0))
