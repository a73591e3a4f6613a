"""Vector add spelled with the aie intrinsic set: C = aie.add(A, B) on a grid of 4 AIE cores, each adding
its 16-row block (the layouts shard the rows over the grid)."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store
from htp.dialects.layout import Layout
from htp.intrinsics import aie


@kernel(mapping=[4])
def vadd(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("S(0)R")],
         C: Out[Tensor[64, 64, f32] @ Layout("S(0)R")]):
    store(C, aie.add(load(A), load(B)))
