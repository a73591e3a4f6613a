# pipeline_fuzz reproducer (seed 71): M = N = K = 0 made layout-axe publish an invalid layout.signatures (an unlocated internal error)
"""Row-normalised GEMM with a collective: P = A @ B on a 2 x 2 core mesh, then each row of P divided by its
sum. Each core holds a 32 x 32 block of P, so its row sums are partial (they owe a sum over mesh axis 1);
`allreduce(..., axis=1)` adds the partials of the two cores of a mesh row, and every core divides its block.

layout-axe's pass axe.lower cuts the kernel at the allreduce into two mapped kernels that exchange the
partials through global memory (each core stores its own, then reads its peer's); backend-pto runs them as
tasks per core, backend-aie as two designs of four cores, host-orchestrated.

    python examples/gemm_rownorm.py --target pto-a2a3sim     # or aie-npu1
"""
import sys
import numpy as np
from htp.dialects.layout import Layout, allreduce
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul, rowsum, rowexpand_div
import htp_example
M = N = K = 0

@kernel(mapping=[2, 2])
def gemm_rownorm(A: In[Tensor[M, K, f32] @ Layout('S(0)R')], B: In[Tensor[K, N, f32] @ Layout('RS(1)')], C: Out[Tensor[M, N, f32] @ Layout('S(0)S(1)')], S: Out[Tensor[M, 1, f32] @ Layout('S(0)R')]):
    p = matmul(load(A), load(B))
    total = allreduce(rowsum(p), axis=1)
    store(S, total)
    store(C, rowexpand_div(p, total))

def make_inputs(rng):
    return {'A': rng.uniform(0.5, 1.5, (M, K)).astype(np.float32), 'B': rng.uniform(0.5, 1.5, (K, N)).astype(np.float32)}

def reference(A, B):
    P = A.astype(np.float64) @ B.astype(np.float64)
    S = P.sum(axis=1, keepdims=True)
    return {'C': (P / S).astype(np.float32), 'S': S.astype(np.float32)}
PARITY_CONSTRUCTS = ['collectives in a kernel (`allreduce`, `allgather`, `reduce_scatter`, `relayout`)', 'replicated output of a mapped kernel']
ENTRIES = {'pto-a2a3sim': gemm_rownorm, 'aie-npu1': gemm_rownorm}
if __name__ == '__main__':
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference, outputs=['C', 'S'], rtol=0.0001, atol=0.001, description=__doc__))
