"""An explicit pass list: instead of the target's pipeline template plus the passes that apply, compile
with a list you choose (checked by the resolver: order, requirements, stages), dump the IR after every
pass, print what one pass changed, then run the package as usual.

    python examples/custom_pipeline.py --target pto-a2a3sim
"""
import difflib
import pathlib
import sys
import tempfile

import numpy as np

import htp
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add, muls
from htp.dialects.wsp import workload, P

M, N, TM = 64, 64, 16
SCALE = 2 * 3 + 1            # folded by tile.fold: the dump after it shows 7


@kernel
def scaled_add(x: In[Tensor[TM, N, f32]], y: In[Tensor[TM, N, f32]], z: Out[Tensor[TM, N, f32]]):
    store(z, add(muls(load(x), SCALE), load(y)))


@workload
def scaled_vector_add(A: In[Tensor[M, N, f32]], B: In[Tensor[M, N, f32]], C: Out[Tensor[M, N, f32]]):
    for i in P(M // TM):
        scaled_add[i](A.tile(i, 0), B.tile(i, 0), C.tile(i, 0))


# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": scaled_vector_add, "aie-npu1": scaled_vector_add}


def main(argv) -> int:
    target = argv[argv.index("--target") + 1] if "--target" in argv else next(iter(ENTRIES))
    if target not in ENTRIES:
        print(f"custom_pipeline.py: --target must be one of {', '.join(ENTRIES)}, not {target}", file=sys.stderr)
        return 2
    ctx = htp.Context()
    work = pathlib.Path(tempfile.mkdtemp(prefix="htp-custom-pipeline-"))
    # 1. The plan the resolver would choose, as a starting point.
    default = ctx.compile(ENTRIES[target], target=target, out=work / "default")
    passes = default.passes
    print(f"default plan for {target}: {', '.join(passes)}")
    # 2. The same passes as an explicit list, with every IR dump.
    pkg = ctx.compile(ENTRIES[target], target=target, out=work / "custom", pipeline=passes, dump_ir="all")
    before, after = pkg.dump("source"), pkg.dump("tile.fold")
    print("what tile.fold changed:")
    print("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "before", "after")))
    assert "7" in after, "the captured constant 2 * 3 + 1 should be folded"
    # 3. Run it.
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((M, N), dtype="float32"), rng.standard_normal((M, N), dtype="float32")
    result = htp.bind(pkg, ctx).run(A=a, B=b)
    err = float(np.max(np.abs(result["C"] - (SCALE * a + b))))
    print(f"custom pipeline: {len(pkg.dumps())} IR dumps in {pkg.path / 'ir'}; max |error| vs NumPy = {err:.3g}")
    return 0 if err < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
