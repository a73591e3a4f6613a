"""Tiered kernels: the kernel for request b depends on its length, known only at run time. The two
workloads describe the same tiers, once with P.when / P.otherwise and once with if / elif / else."""
from htp.dialects.tile import kernel, Tensor, In, Out, f16, i32, load, store
from htp.dialects.wsp import workload, schedule, P, dispatch, round_robin

SHORT = 1024
MEDIUM = 8192


@kernel
def short_attn(q: In[Tensor[1, 128, f16]], o: Out[Tensor[1, 128, f16]]):
    store(o, load(q))


@kernel
def medium_attn(q: In[Tensor[1, 128, f16]], o: Out[Tensor[1, 128, f16]]):
    store(o, load(q))


@kernel
def long_attn(q: In[Tensor[1, 128, f16]], o: Out[Tensor[1, 128, f16]]):
    store(o, load(q))


@workload
def tiers(Q: In[Tensor["B", 128, f16]], O: Out[Tensor["B", 128, f16]], lengths: In[Tensor["B", i32]]):
    for b in P(Q.shape[0]):
        with P.when(lengths[b] <= SHORT):
            short_attn[b](Q[b:b + 1, :], O[b:b + 1, :])
        with P.otherwise():
            with P.when(lengths[b] <= MEDIUM):
                medium_attn[b](Q[b:b + 1, :], O[b:b + 1, :])
            with P.otherwise():
                long_attn[b](Q[b:b + 1, :], O[b:b + 1, :])


@workload
def tiers_if(Q: In[Tensor["B", 128, f16]], O: Out[Tensor["B", 128, f16]], lengths: In[Tensor["B", i32]]):
    for b in P(Q.shape[0]):
        if lengths[b] <= SHORT:
            short_attn[b](Q[b:b + 1, :], O[b:b + 1, :])
        elif lengths[b] <= MEDIUM:
            medium_attn[b](Q[b:b + 1, :], O[b:b + 1, :])
        else:
            long_attn[b](Q[b:b + 1, :], O[b:b + 1, :])


@schedule(tiers)
def tiers_schedule():
    dispatch(round_robin(2))
