"""The memory facet's keyword form: X's local part is column-major (`order=[1, 0]`: dim 1 outermost), so
the shim reads X with a transposing pattern and the kernel reads the object with strides [1, 32]."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects.layout import Layout


@kernel
def add_o(X: In[Tensor[32, 64, f32] @ Layout("RR", order=[1, 0])],
          Y: In[Tensor[32, 64, f32]],
          Z: Out[Tensor[32, 64, f32]]):
    store(Z, add(load(X), load(Y)))
