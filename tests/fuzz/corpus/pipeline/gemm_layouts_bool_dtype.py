# pipeline_fuzz reproducer: a Tensor[.., bool] parameter with a layout made layout-axe publish an invalid layout.signatures (an unlocated internal error)
"""GEMM as an SPMD kernel whose operands carry distributed layouts: C = A @ B on a 2 x 2 core mesh.

A @ S(0)R shards A's rows over mesh axis 0 and replicates them across axis 1, B @ RS(1) shards B's
columns over axis 1, C @ S(0)S(1) gives each core its 32 x 32 block. The kernel body is written for one
core's part (its local shapes); each backend turns the layouts into data movement: backend-pto into one
cube task per core coordinate on the shard views of A, B and C (the orchestration's mesh loops), backend-aie
into object FIFOs that broadcast and distribute the shards to a 2 x 2 grid of compute cores.

    python examples/gemm_layouts.py --target pto-a2a3sim     # or aie-npu1
"""
import sys
from htp.dialects.layout import Layout
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul, full
import htp_example
from gemm import BK, BM, BN, K, M, N, make_inputs, reference

@kernel(mapping=[2, 2])
def gemm_spmd(A: In[Tensor[M, K, f32] @ Layout('S(0)R')], B: In[Tensor[K, N, f32] @ Layout('RS(1)')], C: Out[Tensor[M, N, bool] @ Layout('S(0)S(1)')]):
    acc = full((BM, BN), 0.0, f32)
    for k in range(K // BK):
        acc = matmul(load(A[:, k * BK:(k + 1) * BK]), load(B[k * BK:(k + 1) * BK, :]), acc)
    store(C, acc)
PARITY_CONSTRUCTS = ['layout `dist` facet (sharding over cores)']
ENTRIES = {'pto-a2a3sim': gemm_spmd, 'aie-npu1': gemm_spmd}
if __name__ == '__main__':
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference, outputs=['C'], rtol=0.0001, atol=0.001, description=__doc__))
