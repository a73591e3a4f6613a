"""Bad input: one core reads three tensors; a compute tile has two input DMA channels."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add


@kernel
def add3(x: In[Tensor[16, 64, f32]], y: In[Tensor[16, 64, f32]], w: In[Tensor[16, 64, f32]],
         z: Out[Tensor[16, 64, f32]]):
    store(z, add(add(load(x), load(y)), load(w)))
