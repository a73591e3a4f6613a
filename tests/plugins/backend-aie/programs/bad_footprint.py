"""Bad input: each core's 128 x 128 f32 blocks of A, B and C (64 KiB each) overflow a compute tile's
64 KiB data memory."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul
from htp.dialects.layout import Layout


@kernel(mapping=[2, 1])
def gemm(A: In[Tensor[256, 128, f32] @ Layout("S(0)R")],
         B: In[Tensor[128, 128, f32] @ Layout("RS(1)")],
         C: Out[Tensor[256, 128, f32] @ Layout("S(0)S(1)")]):
    store(C, matmul(load(A), load(B)))
