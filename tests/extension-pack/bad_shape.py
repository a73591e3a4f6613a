"""An @elementwise function whose tensors disagree: ext.shape at the parameter 'z'."""
from htp.dialects.tile import Tensor, In, Out, f32
from htp.dialects.ext import elementwise


@elementwise(tile=(32, 128))
def mismatched(x: In[Tensor[64, 256, f32]], z: Out[Tensor[64, 128, f32]]):
    z[...] = x * 2.0
