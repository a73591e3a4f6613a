# pipeline_fuzz reproducer: mapping=[4294967296, 2]: layout-axe enumerated every coordinate before its limit (hang)
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects.layout import Layout


@kernel(mapping=[4294967296, 2])
def add_sharded(x: In[Tensor[64, 64, f32] @ Layout("S(0)R")], y: Out[Tensor[64, 64, f32] @ Layout("S(0)R")]):
    store(y, add(load(x), load(x)))
