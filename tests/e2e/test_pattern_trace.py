"""Issue 18: the fold, canonicalize and tile-lowering work is done by rewrite patterns through the host's
driver, and the pass trace (ir/pass_trace.jsonl) lists each application. The program is written as a user
would: captured constants and integer arithmetic in a kernel, a `range` loop in a workload, two kernels
and an intermediate."""
import importlib.util
import json
import textwrap

import htp

PROGRAM = textwrap.dedent('''
    from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add, muls
    from htp.dialects.wsp import workload, sequential

    ROWS, COLS, TILE, HALF = 128, 64, 32, 32


    @kernel
    def scale_rows(x: In[Tensor[TILE, COLS, f32]], y: Out[Tensor[TILE, COLS, f32]]):
        for j in range(COLS // HALF):
            store(y[:, j * HALF:j * HALF + HALF], muls(load(x[:, j * HALF:j * HALF + HALF]), 0.5))


    @kernel
    def shift_rows(x: In[Tensor[TILE, COLS, f32]], y: Out[Tensor[TILE, COLS, f32]]):
        store(y, add(load(x), 1.0))


    @workload
    def halve_then_shift(X: In[Tensor[ROWS, COLS, f32]], Y: Out[Tensor[ROWS, COLS, f32]]):
        T: Tensor[ROWS, COLS, f32]
        with sequential():
            for i in range(4):
                scale_rows[i](X.tile(i, 0), T.tile(i, 0))
                shift_rows[i](T.tile(i, 0), Y.tile(i, 0))
''')


def load_program(tmp_path):
    path = tmp_path / "user_program.py"
    path.write_text(PROGRAM)
    spec = importlib.util.spec_from_file_location("user_program", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def trace_of(out):
    events = [json.loads(line) for line in (out / "ir" / "pass_trace.jsonl").read_text().splitlines()]
    return {e["pass"]: e for e in events}


def patterns(event):
    return [r["pattern"] for r in event.get("rewrites", [])]


def test_the_pass_trace_lists_fold_canonicalize_and_lowering_patterns(tmp_path):
    program = load_program(tmp_path)
    out = tmp_path / "pkg"
    htp.Context().compile(program.halve_then_shift, target="pto-a2a3sim", out=out, dump_ir="tile.lower")
    trace = trace_of(out)

    fold = patterns(trace["tile.fold"])
    assert "tile.inline-captured-constants" in fold, fold  # ROWS, COLS, TILE become literals
    assert "tile.fold-int-binop" in fold, fold             # then ROWS // TILE, i * TILE + TILE, ... fold
    assert patterns(trace["wsp.canonicalize"]) == ["wsp.range-to-seq"]

    lower = trace["tile.lower"]
    assert patterns(lower) == ["tile.lower-function"] * 2, lower
    assert [r["span"]["line"] for r in lower["rewrites"]] == sorted(r["span"]["line"] for r in lower["rewrites"])

    (dump,) = list((out / "ir").glob("*_tile.lower.ast.json"))
    kernels = json.loads(dump.read_text())["attrs"]["tile.kernels"]["kernels"]
    assert [k["name"] for k in kernels] == ["scale_rows", "shift_rows"]  # source order
    # The folded loop bound reached the register IR.
    (loop,) = [op for op in kernels[0]["body"] if op["op"] == "for"]
    assert loop["stop"] == 2
