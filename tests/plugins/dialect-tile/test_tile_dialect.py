"""dialect-tile end to end: `htp-host compile prog.py --target check` with the tile plugin and the check
fixture backend, comparing the module attribute tile.kernels with golden files, and every bad-input case
with its diagnostic code, message and span.

Run by ctest (label `tile`) with HTP_HOST_EXE, HTP_TILE_PLUGIN and HTP_CHECK_PLUGIN set; regenerate the
goldens after an intended change with HTP_UPDATE_GOLDENS=1 (and review the diff)."""
import ast
import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
GOLDEN = os.path.join(HERE, "golden")
HOST = os.environ.get("HTP_HOST_EXE", "")
TILE = os.environ.get("HTP_TILE_PLUGIN", "")
CHECK = os.environ.get("HTP_CHECK_PLUGIN", "")
PYTHON_DIR = os.environ.get("HTP_PYTHON_DIR", "")  # the build tree's htp package (for htp.ast.v1 input)

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

@pytest.mark.parametrize("name", ["vadd", "rmsnorm", "softmax", "gemm", "features"])
def test_tile_kernels_match_the_golden(tmp_path, name):
    got = kernels_of(compile_ok(tmp_path, name + ".py"))
    golden = os.path.join(GOLDEN, name + ".tile.kernels.json")
    if os.environ.get("HTP_UPDATE_GOLDENS") == "1":  # the one switch every golden test reads
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
    ("a += a", "tile.operator", "operator '+=' does not apply to tiles: write 'a = add(a, ...)'", 9, 5),
    ("c = (lambda: a)()", "tile.unsupported", "lambda is not supported in tile bodies", 9, 10),
    ("c = a.exp()", "tile.call", "call of 'a.exp' is not supported in tile bodies: only tile intrinsics "
     "can be called (spell them tile.exp(...) or import them: from htp.dialects.tile import exp)", 9, 9),
    ("for i in range(0, 4, 0):\n        pass", "tile.range", "range() step must not be zero", 9, 26),
    ("c = load(x[::2, :])", "tile.view", "strided views are not supported", 9, 18),
    ("c = load(x[1.5:16, :])", "tile.dtype-mismatch", "a slice bound of 'x' must be an integer, got 1.5", 9, 16),
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
import math
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
     "is not written on every path through the kernel: some branch of an 'if' does not store it (each 'if' counts "
     "as possibly not taken, even one a loop variable makes true in some iteration, such as 'if k == 0:'; store it "
     "in every branch, or outside the 'if')", "error"),
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


# A store whose value is wrong is still a store: its one error is the value's, not also an Out "never written".
WRONG_VALUE_CASES = [
    ("operand-dtypes", "    store(z, add(load(x), cast(load(x), f16)))\n", "tile.dtype-mismatch"),
    ("store-dtype", "    store(z, cast(load(x), f16))\n", "tile.dtype-mismatch"),
    ("store-shape", "    store(z, load(x[0:16, :]))\n", "tile.shape-mismatch"),
    ("scalar-value", "    store(z, n)\n", "tile.type-mismatch"),
]


@pytest.mark.parametrize("name,body,code", WRONG_VALUE_CASES, ids=[c[0] for c in WRONG_VALUE_CASES])
def test_a_store_of_a_wrong_value_reports_the_value_alone(tmp_path, name, body, code):
    prog = tmp_path / "wrong.py"
    prog.write_text("from htp.dialects.tile import *\n\n\n@kernel\n"
                    "def k(x: In[Tensor[32, 128, f32]], z: Out[Tensor[32, 128, f32]], n: Scalar[i32]):\n" + body)
    proc = compile_program(str(prog), tmp_path / "out")
    assert proc.returncode != 0
    assert [d["code"] for d in diagnostics(proc) if d["sev"] == "error"] == [code], proc.stderr


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


# ------------------------------------------------------------------------------- marks of other plugins

def ast_program(tmp_path, source, attrs):
    """An htp.ast.v1 program from `source` whose nodes get the attributes `attrs(node)` returns (what the
    passes of other plugins set: layout.local_shape, tile.lower, tile.foreign)."""
    if not os.path.isdir(os.path.join(PYTHON_DIR, "htp")):
        pytest.skip("HTP_PYTHON_DIR does not hold the htp package")
    sys.path.insert(0, PYTHON_DIR)
    try:
        from htp import _ast_json
    finally:
        sys.path.remove(PYTHON_DIR)
    py = tmp_path / "prog.py"
    py.write_text(source)
    tree = ast.parse(source)
    for node in ast.walk(tree):
        a = attrs(node)
        if a:
            node._htp_attrs = a
    doc = _ast_json.to_json(tree, str(py), source=source)
    path = tmp_path / "prog.json"
    path.write_text(_ast_json.dumps(doc))
    return str(path)


LAYOUT_PROGRAM = """\
@kernel
def k(x: In[Tensor[64, 128, f32]], z: Out[Tensor[64, 128, f32]]):
    t = load(x)
    store(z, exp(t))
"""


def local_shape_on_params(node):
    if isinstance(node, ast.arg):
        return {"layout.local_shape": [32, 128]}
    return None


def test_a_layout_local_shape_types_the_body_per_core(tmp_path):
    prog = ast_program(tmp_path, LAYOUT_PROGRAM, local_shape_on_params)
    out = tmp_path / "pkg"
    proc = compile_program(prog, out)
    assert proc.returncode == 0, proc.stderr
    (k,) = kernels_of(out)["kernels"]
    assert [p["local_shape"] for p in k["params"]] == [[32, 128], [32, 128]]
    assert [p["type"]["shape"] for p in k["params"]] == [[64, 128], [64, 128]]  # the global shape stays
    assert {l["name"]: l["shape"] for l in k["locals"]}["t"] == [32, 128]


def test_views_are_checked_against_the_local_shape(tmp_path):
    prog = ast_program(tmp_path, LAYOUT_PROGRAM.replace("load(x)", "load(x[0:64, :])"), local_shape_on_params)
    proc = compile_program(prog, tmp_path / "pkg")
    (d,) = [d for d in diagnostics(proc) if d["code"] == "tile.view-out-of-bounds"]
    assert "is 64 long in dim 0 but 'x' (Tensor[32, 128, f32]) has 32" in d["msg"] and d["line"] == "3"


def test_an_invalid_local_shape_is_diagnosed(tmp_path):
    prog = ast_program(tmp_path, LAYOUT_PROGRAM,
                       lambda n: {"layout.local_shape": [128, 128]} if isinstance(n, ast.arg) and n.arg == "x" else None)
    proc = compile_program(prog, tmp_path / "pkg")
    (d,) = [d for d in diagnostics(proc) if d["code"] == "tile.local-shape"]
    assert "parameter 'x' (Tensor[64, 128, f32]) has an invalid layout.local_shape [128,128]" in d["msg"]


PROCESS_PROGRAM = """\
def proc(x: In[Tensor[32, 128, f32]], c, n: Scalar[i32]):
    t = exp(load(x))
    send(c, t, n)
    u = recv(c)
    v = add(t, u)
    done(c)
"""

TILE_F32 = {"kind": "tile", "shape": [32, 128], "dtype": "f32"}


def process_marks(node):
    if isinstance(node, ast.FunctionDef):
        return {"htp.dialect": "csp", "tile.lower": {"kind": "process"}}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        marks = {"send": ("csp.send", None), "recv": ("csp.recv", TILE_F32), "done": ("csp.close", None)}
        if node.func.id in marks:
            op, ty = marks[node.func.id]
            return {"tile.foreign": {"op": op, "type": ty, "attrs": {"channel": "c1"}}}
    return None


def test_a_marked_process_is_lowered_with_its_foreign_ops(tmp_path):
    out = tmp_path / "pkg"
    proc = compile_program(ast_program(tmp_path, PROCESS_PROGRAM, process_marks), out)
    assert proc.returncode == 0, proc.stderr
    (p,) = kernels_of(out)["kernels"]
    assert (p["name"], p["kind"]) == ("proc", "process")
    assert [q["name"] for q in p["params"]] == ["x", "n"]  # the channel is the csp dialect's
    ops = [{k: v for k, v in op.items() if k != "span"} for op in p["body"]]
    assert ops[2] == {"op": "csp.send", "args": ["c", "t", {"param": "n"}], "attrs": {"channel": "c1"}}
    assert ops[3] == {"op": "csp.recv", "dst": "u", "args": ["c"], "attrs": {"channel": "c1"}}
    assert ops[4] == {"op": "add", "dst": "v", "args": ["t", "u"]}
    assert ops[5]["op"] == "csp.close"
    with open(out / "manifest.json") as f:
        caps = [o["capability"] for o in json.load(f)["capabilities"]["obligations"]]
    # bare intrinsic names in another dialect's function count; the dialect is raised at the first one
    assert sorted(caps) == sorted(["Uses.Intrinsic(op=exp,set=tile)", "Uses.Intrinsic(op=load,set=tile)",
                                   "Uses.Intrinsic(op=add,set=tile)", "Uses.Dialect(name=tile)"])


def test_an_invalid_foreign_mark_is_diagnosed(tmp_path):
    def marks(node):
        m = process_marks(node)
        if m and "tile.foreign" in m and m["tile.foreign"]["op"] == "csp.recv":
            m["tile.foreign"]["type"] = {"kind": "tile", "shape": [32], "dtype": "f32"}
        return m
    proc = compile_program(ast_program(tmp_path, PROCESS_PROGRAM, marks), tmp_path / "pkg")
    (d,) = [d for d in diagnostics(proc) if d["code"] == "tile.foreign"]
    assert "the tile.foreign mark of 'csp.recv' has an invalid result type" in d["msg"] and d["line"] == "4"


def test_a_kernel_is_recognised_by_its_decorator_without_the_capture(tmp_path):
    out = tmp_path / "pkg"
    src = "@tile.kernel(mapping=[4])\ndef k(x: In[Tensor[16, f32]], z: Out[Tensor[16, f32]]):\n    store(z, tile.neg(load(x)))\n"
    proc = compile_program(ast_program(tmp_path, src, lambda n: None), out)
    assert proc.returncode == 0, proc.stderr
    (k,) = kernels_of(out)["kernels"]
    assert k["mapping"] == [4] and [op["op"] for op in k["body"]] == ["load", "neg", "store"]
    assert {l["name"]: l["shape"] for l in k["locals"]}["_t0"] == [1, 16]


def test_the_plugin_ships_its_stub_and_stubgen_uses_it(tmp_path):
    stub = os.path.join(os.path.splitext(TILE)[0] + ".stubs", "tile.pyi")
    assert os.path.isfile(stub)
    if not os.path.isdir(os.path.join(PYTHON_DIR, "htp")):
        pytest.skip("HTP_PYTHON_DIR does not hold the htp package")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    subprocess.run([sys.executable, "-m", "htp.stubgen", "--out", str(tmp_path), "--plugins", TILE], env=env,
                   check=True, capture_output=True, timeout=120)
    text = (tmp_path / "dialects" / "tile.pyi").read_text()
    assert text.startswith("# Shipped by plugin 'dialect-tile' for dialect 'tile'")
    assert "def matmul(a: Tile, b: Tile, acc: Tile | None = ...) -> Tile: ..." in text
    assert "_Any" not in text  # the shipped stub declares every surface name
    compile(text, "tile.pyi", "exec")
    ops = (tmp_path / "intrinsics" / "tile.pyi").read_text()
    assert ops.startswith("# Shipped by plugin 'dialect-tile' for intrinsic set 'tile'") and "_Any" not in ops
    assert "    rowexpand_max as rowexpand_max," in ops


def test_an_unknown_name_suggests_a_known_one(tmp_path):
    src = "@kernel\ndef k(xs: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]]):\n    store(z, load(xz))\n"
    proc = compile_program(ast_program(tmp_path, src, lambda n: None), tmp_path / "pkg")
    (d,) = [d for d in diagnostics(proc) if d["code"] == "tile.unknown-name"]
    assert d["msg"] == "unknown name 'xz' in 'k'; did you mean 'xs'?" and (d["line"], d["col"]) == ("3", "19")


PYTHON_API_SCRIPT = """\
import json, sys
import htp
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects import tile

@kernel
def vadd(x: In[Tensor[32, 128, f32]], y: In[Tensor[32, 128, f32]], z: Out[Tensor[32, 128, f32]]):
    store(z, add(load(x), tile.exp(load(y))))

ctx = htp.Context([sys.argv[1], sys.argv[2]], use_environment=False)
pkg = ctx.compile(vadd, target="check", out=sys.argv[3])
with open(pkg.path / "codegen" / "check" / "tile.kernels.json") as f:
    print(json.dumps([op["op"] for op in json.load(f)["kernels"][0]["body"]]))
"""


def test_kernels_compile_from_python(tmp_path):
    if not os.path.isdir(os.path.join(PYTHON_DIR, "htp")):
        pytest.skip("HTP_PYTHON_DIR does not hold the htp package")
    script = tmp_path / "api.py"
    script.write_text(PYTHON_API_SCRIPT)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    proc = subprocess.run([sys.executable, str(script), TILE, CHECK, str(tmp_path / "pkg")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["load", "load", "exp", "add", "store"]


def test_a_constexpr_default_must_fit_its_declared_type(tmp_path):
    prog = tmp_path / "cx.py"
    prog.write_text("from htp.dialects.tile import *\n\n\n@kernel\n"
                    "def k(x: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]], K: Constexpr[int] = 1.5):\n"
                    "    store(z, load(x))\n")
    proc = compile_program(str(prog), tmp_path / "out")
    (d,) = [d for d in diagnostics(proc) if d["code"] == "tile.constexpr"]
    assert d["msg"] == "Constexpr parameter 'K' is declared Constexpr[int] but its default is 1.5"
    assert (d["line"], d["col"]) == ("5", "84")


def test_other_dialects_functions_use_tile_intrinsics_but_keep_python_builtins(tmp_path):
    src = ("def w(x, y):\n"
           "    a = max(x, y)\n"
           "    b = tile.exp(x)\n"
           "    c = load(y)\n")
    out = tmp_path / "pkg"
    prog = ast_program(tmp_path, src, lambda n: {"htp.dialect": "wsp"} if isinstance(n, ast.FunctionDef) else None)
    proc = compile_program(prog, out)
    assert proc.returncode == 0, proc.stderr  # not marked tile.lower: the tile passes leave it alone
    with open(out / "manifest.json") as f:
        obligations = json.load(f)["capabilities"]["obligations"]
    assert sorted((o["capability"], o["span"]["line"]) for o in obligations) == [
        ("Uses.Dialect(name=tile)", 3), ("Uses.Intrinsic(op=exp,set=tile)", 3), ("Uses.Intrinsic(op=load,set=tile)", 4)]
    assert kernels_of(out)["kernels"] == []
