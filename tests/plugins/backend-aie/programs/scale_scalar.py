"""A runtime scalar parameter of an entry kernel: the host passes `s` as a one-element buffer, a FIFO brings
it to the core, and the kernel reads it."""
from htp.dialects.tile import kernel, Tensor, Scalar, In, Out, f32, load, store, muls


@kernel
def scale(X: In[Tensor[32, 32, f32]], s: Scalar[f32], Y: Out[Tensor[32, 32, f32]]):
    store(Y, muls(load(X), s))
