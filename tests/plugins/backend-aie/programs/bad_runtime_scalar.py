"""Bad input for AIE (valid tile): a runtime scalar parameter of an entry kernel (AIE designs would need a
runtime-parameter buffer written by the host; not lowered)."""
from htp.dialects.tile import kernel, Tensor, Scalar, In, Out, f32, load, store, muls


@kernel
def scale(X: In[Tensor[32, 32, f32]], s: Scalar[f32], Y: Out[Tensor[32, 32, f32]]):
    store(Y, muls(load(X), s))
