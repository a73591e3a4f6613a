"""A distributed Axe layout: cpu-ref runs one core and does not accept the dist facet, so the resolver
rejects the program at the layout."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store
from htp.dialects.layout import Layout


@kernel(mapping=[2])
def rows(x: In[Tensor[64, 128, f32] @ Layout("S(0)R")], y: Out[Tensor[64, 128, f32] @ Layout("S(0)R")]):
    store(y, load(x))
