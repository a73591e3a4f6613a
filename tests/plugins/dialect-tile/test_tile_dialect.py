"""dialect-tile end to end: `htp-host compile prog.py --target check` with the tile plugin and the check
fixture backend, comparing the module attribute tile.kernels with golden files, and every bad-input case
with its diagnostic code, message and span.

Run by ctest (label `tile`) with HTP_HOST_EXE, HTP_TILE_PLUGIN and HTP_CHECK_PLUGIN set; regenerate the
goldens after an intended change with HTP_UPDATE_GOLDEN=1 (and review the diff)."""
import json
import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
GOLDEN = os.path.join(HERE, "golden")
HOST = os.environ.get("HTP_HOST_EXE", "")
TILE = os.environ.get("HTP_TILE_PLUGIN", "")
CHECK = os.environ.get("HTP_CHECK_PLUGIN", "")

pytestmark = pytest.mark.skipif(not all(os.path.isfile(p) for p in (HOST, TILE, CHECK)),
                                reason="HTP_HOST_EXE, HTP_TILE_PLUGIN or HTP_CHECK_PLUGIN is not built")

DIAG = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning): (?P<msg>.*) \[(?P<code>[^\]]+)\]$",
                  re.M)


def compile_program(path, out, *extra):
    args = [HOST, "--plugins", TILE, "--plugins", CHECK, "compile", path, "--target", "check", "-o", str(out),
            *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def diagnostics(proc):
    return [m.groupdict() for m in DIAG.finditer(proc.stderr + proc.stdout)]


def normalise_spans(doc):
    """Spans name the program by its base name, so goldens do not depend on the checkout's path."""
    if isinstance(doc, dict):
        return {k: (os.path.basename(v) if k == "file" and isinstance(v, str) else normalise_spans(v))
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [normalise_spans(v) for v in doc]
    return doc


def compile_ok(tmp_path, program, *extra):
    out = tmp_path / "pkg"
    proc = compile_program(os.path.join(PROGRAMS, program), out, *extra)
    assert proc.returncode == 0, proc.stderr
    return out


def kernels_of(out):
    with open(out / "codegen" / "check" / "tile.kernels.json") as f:
        return normalise_spans(json.load(f))


# ------------------------------------------------------------------------------------------- goldens

@pytest.mark.parametrize("name", ["vadd", "rmsnorm", "softmax", "gemm"])
def test_tile_kernels_match_the_golden(tmp_path, name):
    got = kernels_of(compile_ok(tmp_path, name + ".py"))
    golden = os.path.join(GOLDEN, name + ".tile.kernels.json")
    if os.environ.get("HTP_UPDATE_GOLDEN"):
        with open(golden, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
            f.write("\n")
    with open(golden) as f:
        assert got == json.load(f)


def test_the_gemm_k_loop_accumulates_into_one_register(tmp_path):
    k = kernels_of(compile_ok(tmp_path, "gemm.py"))["kernels"]
    gemm, aug = k[0], k[1]
    assert gemm["mapping"] == [2, 2]
    k_loop = gemm["body"][0]["body"][0]["body"][1]
    assert k_loop["op"] == "for" and k_loop["var"] == "k" and k_loop["stop"] == 4
    mm = k_loop["body"][-1]
    assert (mm["op"], mm["dst"], mm["args"], mm["accumulate"]) == ("matmul", "acc", ["ta", "tb"], True)
    locals_ = {l["name"]: l for l in gemm["locals"]}
    assert locals_["acc"]["dtype"] == "f32" and locals_["acc"]["shape"] == [32, 32]
    store = gemm["body"][0]["body"][0]["body"][-1]
    assert store["op"] == "store" and locals_[store["value"]]["dtype"] == "f16"
    aug_mm = aug["body"][1]["body"][-1]
    assert (aug_mm["op"], aug_mm["dst"], aug_mm["accumulate"]) == ("matmul", "acc", True)


def test_fold_turns_captured_constants_into_literals(tmp_path):
    out = compile_ok(tmp_path, "vadd.py", "--dump-ir", "all")
    folded = (out / "ir" / "01_tile.fold.py").read_text()
    assert "for i in range(8):" in folded  # N // R with N = 256, R = 32
    assert "x: In[Tensor[256, 128, f32]]" in folded


def test_typecheck_sets_the_signature_and_expression_types(tmp_path):
    out = compile_ok(tmp_path, "vadd.py", "--dump-ir", "all")
    with open(out / "ir" / "02_tile.typecheck.ast.json") as f:
        doc = json.load(f)
    fn = doc["root"]["body"][0]
    sig = fn["_attrs"]["tile.signature"]
    assert sig["name"] == "vadd" and sig["kind"] == "kernel" and sig["mapping"] is None
    assert [(p["name"], p["dir"]) for p in sig["params"]] == [("x", "in"), ("y", "in"), ("z", "out")]
    assert sig["params"][2]["type"] == {"kind": "tensor", "shape": [256, 128], "dtype": "f32"}
    assert sig["params"][2]["local_shape"] == [256, 128]
    load_call = fn["body"][0]["body"][0]["value"]
    assert load_call["_attrs"]["tile.type"] == {"kind": "tile", "shape": [32, 128], "dtype": "f32"}
    view = load_call["args"][0]
    assert view["_attrs"]["tile.type"] == {"kind": "tensor", "shape": [32, 128], "dtype": "f32"}


def test_the_scanner_records_the_dialect_and_each_intrinsic_call(tmp_path):
    out = compile_ok(tmp_path, "softmax.py")
    with open(out / "manifest.json") as f:
        obligations = json.load(f)["capabilities"]["obligations"]
    caps = [(o["capability"], o["span"]["line"]) for o in obligations]
    assert caps[0] == ("Uses.Dialect(name=tile)", 5)
    ops = [c for c, _ in caps[1:]]
    assert ops == [f"Uses.Intrinsic(op={op},set=tile)" for op in
                   ("load", "rowmax", "exp", "rowexpand_sub", "rowsum", "store", "rowexpand_div")]


# ------------------------------------------------------------------------------------------- bad input

BAD = [
    # (program text, code, message fragment, line, col) — line/col as printed (1-based column)
    ("c = add(a, b)", "tile.shape-mismatch",
     "add: operand shapes differ: 'a' (Tile[32, 128, f32]) and 'b' (Tile[32, 64, f32])", 9, 9),
    ("c = matmul(a, a)", "tile.shape-mismatch",
     "matmul: inner dimensions differ: 'a' (Tile[32, 128, f32]) is [M, K] with K = 128 but 'a' "
     "(Tile[32, 128, f32]) is [K, N] with K = 32", 9, 9),
    ("c = rowexpand_sub(a, b)", "tile.shape-mismatch",
     "rowexpand_sub combines a [R, C] tile with a [R, 1] tile", 9, 9),
    ("store(x, a)", "tile.store-to-in", "store to 'x', which is an In parameter of 'k'", 9, 11),
    ("store(z, b)", "tile.shape-mismatch", "store: the view of 'z' is [32, 128] but 'b' (Tile[32, 64, f32]) is [32, 64]",
     9, 5),
    ("c = load(z)", "tile.load-from-out", "load from 'z', which is an Out parameter of 'k'", 9, 14),
    ("c = exp(load(q))", "tile.dtype-mismatch", "exp needs a floating-point tile", 9, 9),
    ("c = add(a, cast(a, f16))", "tile.dtype-mismatch", "add: operand dtypes differ", 9, 9),
    ("while True:\n        pass", "tile.unsupported", "'while' loops are not supported in tile bodies", 9, 5),
    ("try:\n        pass\n    except Exception:\n        pass", "tile.unsupported", "'try' is not supported", 9, 5),
    ("with a:\n        pass", "tile.unsupported", "'with' is not supported", 9, 5),
    ("f = lambda: 1", "tile.unsupported", "lambda is not supported in tile bodies", 9, 9),
    ("c = tile.addd(a, a)", "tile.unknown-intrinsic", "'tile.addd' is not a tile intrinsic; did you mean 'add'?", 9, 9),
    ("c = helper(a)", "tile.call", "'helper' is a captured function", 9, 9),
    ("c = k(x, y, z, q)", "tile.recursion", "'k' calls itself", 9, 9),
    ("c = a + a", "tile.operator", "operator '+' does not apply to tiles", 9, 9),
    ("c = load(x[0:16, 0:256])", "tile.view-out-of-bounds", "this view of 'x' is 256 long in dim 1", 9, 14),
    ("for i in range(3):\n        c = load(x[i * 16:i * 16 + 16, :])", "tile.view-out-of-bounds",
     "covers [0, 48) in dim 0 for i in [0, 2], outside [0, 32)", 10, 18),
    ("c = load(x[0:n, :])", "tile.view-extent", "is not static", 9, 16),
    ("c = load(x.tile(0, 0))", "tile.view-shape", "needs the block shape", 9, 14),
    ("c = add(a)", "tile.arity", "add is missing its argument 'b': add(a, b)", 9, 9),
    ("c = exp(a, a)", "tile.arity", "exp takes 1 argument, got 2: exp(a)", 9, 9),
    ("a = full((32, 64), 0.0)", "tile.retype", "'a' is Tile[32, 128, f32] (line 7) but is assigned a Tile[32, 64, f32]",
     9, 9),
    ("return a", "tile.return-value", "tile bodies return nothing", 9, 12),
    ("x = load(y)", "tile.assign", "cannot assign to 'x', which is a parameter of 'k'", 9, 5),
]

BAD_TEMPLATE = """\
from htp.dialects import tile
from htp.dialects.tile import *


@kernel
def k(x: In[Tensor[32, 128, f32]], y: In[Tensor[32, 64, f32]], z: Out[Tensor[32, 128, f32]], q: In[Tensor[32, 128, i32]], n: Scalar[i32]):
    a = load(x)
    b = load(y)
    {body}
    store(z, a)


@kernel
def helper(x: In[Tensor[32, 128, f32]], z: Out[Tensor[32, 128, f32]]):
    store(z, load(x))
"""


@pytest.mark.parametrize("body,code,fragment,line,col", BAD, ids=[b[1] + ":" + b[0].split("\n")[0] for b in BAD])
def test_bad_kernel_is_diagnosed_at_its_span(tmp_path, body, code, fragment, line, col):
    prog = tmp_path / "bad.py"
    prog.write_text(BAD_TEMPLATE.format(body=body))
    proc = compile_program(str(prog), tmp_path / "out")
    assert proc.returncode != 0
    found = [d for d in diagnostics(proc) if d["code"] == code]
    assert found, proc.stderr
    d = found[0]
    assert fragment in d["msg"], d["msg"]
    assert (int(d["line"]), int(d["col"])) == (line, col), d
    assert os.path.basename(d["file"]) == "bad.py"
    assert not (tmp_path / "out").exists()  # a failed compile leaves no package


OUT_CASES = [
    ("never", "    a = load(x)\n", "tile.out-not-written",
     "Out parameter 'z' of kernel 'k' is never written: store a tile to it with store(z, ...)", "error"),
    ("branch", "    a = load(x)\n    if n > 0:\n        store(z, a)\n", "tile.out-not-written",
     "is not written on every path through the kernel: some branch of an 'if' does not store it", "error"),
    ("both-branches", "    a = load(x)\n    if n > 0:\n        store(z, a)\n    else:\n        store(z, exp(a))\n", None, "",
     None),
    ("static-loop", "    for i in range(2):\n        store(z[i * 16:i * 16 + 16, :], load(x[0:16, :]))\n", None, "", None),
    ("dynamic-loop", "    for i in range(n):\n        store(z[0:16, :], load(x[0:16, :]))\n", "tile.out-maybe-unwritten",
     "is written only inside a loop whose trip count is not known statically (line 6)", "warning"),
    ("early-return", "    a = load(x)\n    if n > 0:\n        return\n    store(z, a)\n", "tile.out-not-written",
     "is not written on every path before the 'return' at line 8", "error"),
]


@pytest.mark.parametrize("name,body,code,fragment,severity", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_every_out_is_written_on_every_path(tmp_path, name, body, code, fragment, severity):
    prog = tmp_path / "outs.py"
    prog.write_text("from htp.dialects.tile import *\n\n\n@kernel\n"
                    "def k(x: In[Tensor[32, 128, f32]], z: Out[Tensor[32, 128, f32]], n: Scalar[i32]):\n" + body)
    proc = compile_program(str(prog), tmp_path / "out")
    diags = diagnostics(proc)
    if code is None:
        assert proc.returncode == 0, proc.stderr
        assert not [d for d in diags if d["code"].startswith("tile.out")]
        return
    (d,) = [d for d in diags if d["code"] == code]
    assert d["sev"] == severity and fragment in d["msg"], d
    assert (int(d["line"]), int(d["col"])) == (5, 36)  # the parameter `z: Out[...]`
    assert (proc.returncode == 0) == (severity == "warning")


def test_an_undefined_name_is_rejected_before_the_dialect_runs(tmp_path):
    prog = tmp_path / "undef.py"
    prog.write_text(BAD_TEMPLATE.format(body="c = undefined_thing"))
    proc = compile_program(str(prog), tmp_path / "out")
    assert proc.returncode != 0
    assert [d["code"] for d in diagnostics(proc)] == ["capture.undefined"]


def test_an_untyped_kernel_parameter_is_an_error(tmp_path):
    prog = tmp_path / "untyped.py"
    prog.write_text("from htp.dialects.tile import *\n\n\n@kernel\ndef k(x, z: Out[Tensor[16, 16, f32]]):\n"
                    "    store(z, load(x))\n")
    proc = compile_program(str(prog), tmp_path / "out")
    (d,) = [d for d in diagnostics(proc) if d["code"] == "tile.untyped-param"]
    assert "parameter 'x' of kernel 'k' has no type" in d["msg"] and (d["line"], d["col"]) == ("5", "7")
