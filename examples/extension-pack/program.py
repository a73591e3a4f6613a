"""The extension pack's example program: every extension of the pack in one compile unit.

  htp-host --plugins <ext-pack dir> compile program.py --target cpu-ref -o out/cpu
  htp-host --plugins <ext-pack dir> compile program.py --target pto-a2a3sim -o out/pto
"""
from htp.dialects.tile import kernel, Tile, Tensor, In, Out, f32, load, store, relu, exp, rowmax, rowexpand_sub
from htp.dialects.ext import elementwise, axpby
from htp.dialects.place import Place

ROWS, COLS = 64, 256


# The pack's programming model: a whole-tensor expression, tiled by the pack's own lowering pass.
@elementwise(tile=(32, 128))
def blend(x: In[Tensor[ROWS, COLS, f32]], y: In[Tensor[ROWS, COLS, f32]], z: Out[Tensor[ROWS, COLS, f32]]):
    z[...] = relu(axpby(x, y, 2.0, -0.5)) + x * 0.25


# A plain tile kernel using the pack's intrinsic and layout kind: a numerically stable row-wise
# exp(x - max) of axpby(x, y), with the intermediate placed in UB.
@kernel
def shifted_exp(x: In[Tensor[32, 128, f32]], y: In[Tensor[32, 128, f32]], z: Out[Tensor[32, 128, f32]]):
    for r in range(2):
        a = load(x.tile(r, 0, shape=(16, 128)))
        b = load(y.tile(r, 0, shape=(16, 128)))
        t: Tile[16, 128, f32] @ Place("UB") = axpby(a, b, 0.5, 1.5)
        store(z.tile(r, 0, shape=(16, 128)), exp(rowexpand_sub(t, rowmax(t))))
