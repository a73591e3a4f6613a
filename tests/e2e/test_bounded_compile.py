"""Hostile programs (issue: bounded work for any program): each compile ends with a located diagnostic,
in bounded time and memory, for every simulator target, and leaves no package behind. Compile work must
not grow with a program's constants: the mutants below once hung, exhausted memory or crashed.

The time and address-space limits are hang and blow-up catchers (a regression fails instead of stalling
the suite); the measured times are printed, not asserted."""
from __future__ import annotations

import os
import pathlib
import re
import resource
import subprocess
import sys
import time

import pytest

HOST = os.environ["HTP_HOST"]
EXAMPLES = pathlib.Path(os.environ["HTP_EXAMPLES"])
TARGETS = ["pto-a2a3sim", "aie-npu1"]
TIME_LIMIT_S = 60
ADDRESS_SPACE = 6 << 30
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "") or "ASAN_OPTIONS" in os.environ


def _limits():
    if not SANITIZED:  # ASan reserves terabytes of address space; its build runs without this limit
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def compile_program(tmp_path: pathlib.Path, source: str, target: str):
    prog = tmp_path / "prog.py"
    prog.write_text(source)
    out = tmp_path / f"pkg-{target}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]))
    t0 = time.perf_counter()
    r = subprocess.run([HOST, "compile", str(prog), "--target", target, "-o", str(out)], capture_output=True,
                       text=True, timeout=TIME_LIMIT_S, preexec_fn=_limits, env=env)
    elapsed = time.perf_counter() - t0
    print(f"{target}: exit {r.returncode} in {elapsed * 1e3:.0f} ms")
    assert not out.exists(), "a failed compile left a package"
    assert "Traceback" not in r.stderr, r.stderr
    assert "uncaught exception" not in r.stderr and "plugin.exception" not in r.stderr, r.stderr
    return prog, r


def expect_located(prog: pathlib.Path, r, message: str, code: str):
    """The compile failed with `message` [code] at a line of `prog`."""
    assert r.returncode == 1, r.stderr
    pattern = re.escape(str(prog)) + r":\d+:\d+: error: [^\n]*" + re.escape(message) + r"[^\n]*\[" + re.escape(code) + r"\]"
    assert re.search(pattern, r.stderr), r.stderr


def example(name: str, **replace: str) -> str:
    text = (EXAMPLES / f"{name}.py").read_text()
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("width", ["2**20", "2**31"])
def test_a_tile_wider_than_a_core_is_a_memory_error_before_any_address_is_listed(tmp_path, width):
    src = example("vector_add", **{"M, N = 128, 64": f"M, N = 128, {width}", "TM, TN = 32, 64": f"TM, TN = 32, {width}"})
    prog, r = compile_program(tmp_path, src, "aie-npu1")
    expect_located(prog, r, "but a compute tile of npu1 has 65536 bytes of data memory", "aie.validate.memory")


def test_a_csp_loop_of_2_31_iterations_is_bounded_before_its_views_are_listed(tmp_path):
    src = example("megakernel_pipeline", **{"ROWS, COLS, TILES = 32, 64, 4": "ROWS, COLS, TILES = 32, 64, 2**31"})
    prog, r = compile_program(tmp_path, src, "aie-npu1")
    expect_located(prog, r, "elements; the AIE mapper lays out at most 4194304 elements per stream", "aie.limit.stream")


MESH = '''from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects.layout import Layout


@kernel(mapping=[4294967296, 2])
def add_mapped(x: In[Tensor[64, 64, f32]LAYOUT], y: Out[Tensor[64, 64, f32]LAYOUT]):
    store(y, add(load(x), load(x)))
'''


# pto-a2a3sim does not lower dist layouts (the resolver says so first), so the layout case is AIE's.
@pytest.mark.parametrize("target,layout", [("pto-a2a3sim", ""), ("aie-npu1", ""), ("aie-npu1", ' @ Layout("S(0)R")')])
def test_a_mesh_of_2_33_cores_is_rejected_at_its_mapping(tmp_path, target, layout):
    prog, r = compile_program(tmp_path, MESH.replace("LAYOUT", layout), target)
    assert r.returncode == 1, r.stderr
    assert re.search(re.escape(str(prog)) + r":5:\d+: error: mapping=\[4294967296,2\] has more than 65536 points "
                     r"\(cores\); a kernel's mesh is at most that large \[(tile|layout)\.mapping\]", r.stderr), r.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_a_captured_integer_of_5000_digits_is_a_located_capture_error(tmp_path, target):
    src = example("vector_add", **{"TM, TN = 32, 64": "TM, TN = 32, 64\nBIG = 10**5000",
                                   "store(z, add(load(x), load(y)))": "store(z, add(load(x), load(y)))\n    BIG"})
    prog, r = compile_program(tmp_path, src, target)
    expect_located(prog, r, "'BIG' is a 16610-bit integer, outside the 64-bit range", "capture.constant-range")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("view,message", [
    ("X.tile(i + 1, 0)", "this view of 'X' [128, 64] covers [128, 160) in dimension 0 over i in [0, 3], out of bounds"),
    ("X.tile(i, i)", "this view of 'X' [128, 64] covers [192, 256) in dimension 1 over i in [0, 3], out of bounds"),
])
def test_a_view_leaving_its_tensor_inside_a_loop_is_reported_at_the_view_for_every_target(tmp_path, target, view,
                                                                                           message):
    src = '''from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects.wsp import workload, P


@kernel
def copy_tile(x: In[Tensor[32, 64, f32]], y: Out[Tensor[32, 64, f32]]):
    store(y, load(x))


@workload
def shift(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[128, 64, f32]]):
    for i in P(4):
        copy_tile[i](VIEW, Y.tile(i, 0))
'''.replace("VIEW", view)
    prog, r = compile_program(tmp_path, src, target)
    assert r.returncode == 1, r.stderr
    assert f"{prog}:13:22: error: {message} [wsp.tile-shape]" in r.stderr, r.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_a_process_loop_whose_view_offsets_leave_64_bits_is_out_of_bounds_not_unchecked(tmp_path, target):
    # i * 32 over range(2**62) overflows: such a view is outside any tensor, not "unknown".
    src = example("megakernel_pipeline", **{"range(TILES)": "range(4611686018427387904)"})
    prog, r = compile_program(tmp_path, src, target)
    expect_located(prog, r, "this view of 'X' covers offsets beyond 64 bits in dim 0 for i in [0, 4611686018427387903], "
                            "outside [0, 128)", "tile.view-out-of-bounds")
