"""Bad input: a 8 x 4 kernel grid needs 32 cores; an npu1 has 16 compute tiles."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul
from htp.dialects.layout import Layout


@kernel(mapping=[8, 4])
def gemm(A: In[Tensor[64, 32, f32] @ Layout("S(0)R")],
         B: In[Tensor[32, 64, f32] @ Layout("RS(1)")],
         C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")]):
    store(C, matmul(load(A), load(B)))
