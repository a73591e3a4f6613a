"""InOut tensors: Y is read and written (Y += X on the first half of each core's rows; the other half keeps
its values), over 2 cores with row shards; axpy_half_cm keeps Y column-major on the cores."""
from htp.dialects.tile import kernel, Tensor, In, InOut, f32, load, store, add
from htp.dialects.layout import Layout


@kernel(mapping=[2, 1])
def axpy_half(X: In[Tensor[64, 32, f32] @ Layout("S(0)R")],
              Y: InOut[Tensor[64, 32, f32] @ Layout("S(0)R")]):
    store(Y[0:16, :], add(load(Y[0:16, :]), load(X[0:16, :])))


@kernel(mapping=[2, 1])
def axpy_half_cm(X: In[Tensor[64, 32, f32] @ Layout("S(0)R")],
                 Y: InOut[Tensor[64, 32, f32] @ Layout.axe(shard=[(2, 1, "mesh.x"), (32, 1, "m"), (32, 32, "m")])]):
    """The same with Y's shards column-major on the cores: dimensionsToStream both ways."""
    store(Y[0:16, :], add(load(Y[0:16, :]), load(X[0:16, :])))
