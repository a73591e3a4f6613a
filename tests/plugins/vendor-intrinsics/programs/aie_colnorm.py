"""Column normalisation with vendor-only aie ops (colmax, colexpand_sub, recip, colexpand_mul) on one core:
Y = (X - colmax(X)) * (1 / colsum(|X|))."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store
from htp.intrinsics import aie


@kernel
def colnorm(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    t = load(x)
    shifted = aie.colexpand_sub(t, aie.colmax(t))
    store(y, aie.colexpand_mul(shifted, aie.recip(aie.colsum(aie.abs(t)))))
