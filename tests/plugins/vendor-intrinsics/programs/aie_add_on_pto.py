"""Bad input for PTO targets: an aie intrinsic (the resolver rejects Uses.Intrinsic(set=aie,op=add))."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store
from htp.intrinsics import aie


@kernel
def add_tile(x: In[Tensor[16, 64, f32]], y: In[Tensor[16, 64, f32]], z: Out[Tensor[16, 64, f32]]):
    store(z, aie.add(load(x), load(y)))
