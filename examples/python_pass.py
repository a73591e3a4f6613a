"""A pass written in Python: strength reduction of a division by a constant into a multiplication by its
reciprocal (`divs(t, c)` -> `muls(t, 1/c)`), as an HTP extension that composes with the built-in plugins.

The extension (`ext` below) declares one pass with one match -> apply pattern over the host's AST. The
resolver selects it for programs using the tile dialect, orders it after `tile.fold` (which inlines the
captured constant `SCALE`) and before `tile.typecheck`, and pins it in the package's plan, lockfile and
manifest by the sha256 of this file. The program is scaled-score softmax, as in attention:

    python examples/python_pass.py --target pto-a2a3sim     # or aie-npu1

prints the IR diff the pass made, checks that the generated kernel multiplies instead of divides, and
checks the outputs against NumPy. `htp-host --plugins examples/python_pass.py compile ...` loads the same
extension from the command line.
"""
import difflib
import math
import sys

import numpy as np

from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, exp, divs, rowmax, rowsum, rowexpand_sub, rowexpand_div
from htp.dialects.wsp import workload, P
from htp.extension import Extension

import htp_example

# ---- the extension ---------------------------------------------------------------------------------

ext = Extension("strength-reduction", version="1.0.0", summary="divs(t, c) -> muls(t, 1/c) for a constant c")


@ext.pattern_pass("example.divs-to-muls", roots=["Call"], stage="canonicalize",
                  applies_to=["Uses.Dialect(name=tile)"], after=["tile.fold"], before=["tile.typecheck"],
                  summary="multiply by the reciprocal of a constant divisor")
def divs_to_muls(node, rw):
    """`divs(t, c)` with a float constant c != 0 becomes `muls(t, 1/c)`; anything else does not match."""
    if node.func.type != "Name" or node.func.id != "divs" or len(node.args) != 2 or node.keywords:
        return False
    divisor = node.args[1]
    if divisor.type != "Constant" or not isinstance(divisor.value, float) or divisor.value == 0.0:
        return False
    rw.replace(node, rw.expr("muls(t, r)", at=node, t=node.args[0], r=1.0 / divisor.value))
    return True


# ---- the program -----------------------------------------------------------------------------------

M, N, ROWS = 64, 128, 16
SCALE = math.sqrt(N)  # scores are divided by sqrt(d), as in attention


@kernel
def scaled_softmax_rows(x: In[Tensor[ROWS, N, f32]], y: Out[Tensor[ROWS, N, f32]]):
    s = divs(load(x), SCALE)
    e = exp(rowexpand_sub(s, rowmax(s)))
    store(y, rowexpand_div(e, rowsum(e)))


@workload
def scaled_softmax(X: In[Tensor[M, N, f32]], Y: Out[Tensor[M, N, f32]]):
    for i in P(M // ROWS):
        scaled_softmax_rows[i](X.tile(i, 0), Y.tile(i, 0))


def make_inputs(rng):
    return {"X": (8 * rng.standard_normal((M, N))).astype("float32")}


def reference(X):
    s = X / SCALE
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return {"Y": e / e.sum(axis=1, keepdims=True)}


ENTRIES = {"pto-a2a3sim": scaled_softmax, "aie-npu1": scaled_softmax}


def show_rewrite(ctx, pkg, target):
    """Prints what the pass changed and checks the generated kernel: a multiply, no divide."""
    before, after = pkg.dump("tile.fold"), pkg.dump("example.divs-to-muls")
    print("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                       "after tile.fold", "after example.divs-to-muls")))
    kernels = [p for p in pkg.files if p.startswith("codegen/") and "scaled_softmax_rows" in p]
    code = "".join((pkg.path / p).read_text() for p in kernels)
    # The scale as each backend spells a float literal (pto: 17 significant digits, aie: Python's repr).
    literal = {"pto-a2a3sim": "{:.17g}", "aie-npu1": "{!r}"}[target].format
    ok = literal(1.0 / SCALE) in code and literal(SCALE) not in code
    print(f"  generated kernel ({', '.join(kernels)}): {'multiplies by 1/c' if ok else 'STILL DIVIDES'}")
    return ok


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference, outputs=["Y"], rtol=1e-5, atol=1e-6,
                             description=__doc__, plugins=[sys.modules[__name__]], check_package=show_rewrite))
