from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add

N = 256
R = 32


@kernel
def vadd(x: In[Tensor[N, 128, f32]], y: In[Tensor[N, 128, f32]], z: Out[Tensor[N, 128, f32]]):
    for i in range(N // R):
        a = load(x[i * R:i * R + R, :])
        b = load(y[i * R:i * R + R, :])
        c = add(a, b)
        store(z[i * R:i * R + R, :], c)
