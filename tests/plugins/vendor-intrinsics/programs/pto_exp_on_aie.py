"""Bad input for AIE targets: a pto intrinsic (the resolver rejects Uses.Intrinsic(set=pto,op=exp))."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store
from htp.intrinsics import pto


@kernel
def softplus_ish(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    store(y, pto.exp(load(x)))
