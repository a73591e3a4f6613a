"""Each of two cores reads three tensors; a compute tile has two input DMA channels. The kernel entry runs
host-orchestrated, each core's objects packed into its slice of one FIFO each way (a single-core kernel entry
reading three tensors: test_aie_orchestrated.py)."""
from htp.dialects.layout import Layout
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add


@kernel(mapping=[2])
def add3(x: In[Tensor[32, 64, f32] @ Layout('S(0)R')], y: In[Tensor[32, 64, f32] @ Layout('S(0)R')],
         w: In[Tensor[32, 64, f32] @ Layout('S(0)R')], z: Out[Tensor[32, 64, f32] @ Layout('S(0)R')]):
    store(z, add(add(load(x), load(y)), load(w)))
