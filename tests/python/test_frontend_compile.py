"""ctx.compile to the toy target, packages, not-loaded dialects, and htp-host compile of a .py file."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import htp

# Set by tests/python/CMakeLists.txt: the toy fixture plugin of tests/e2e and htp-host.
TOY_PLUGIN = os.environ.get("HTP_TOY_PLUGIN", "")
HTP_HOST = os.environ.get("HTP_HOST_EXE", "")
needs_toy = pytest.mark.skipif(not os.path.isfile(TOY_PLUGIN), reason="HTP_TOY_PLUGIN not built")
needs_host = pytest.mark.skipif(not os.path.isfile(HTP_HOST), reason="HTP_HOST_EXE not built")

pytestmark = needs_toy

N = 8


@pytest.fixture(scope="module")
def ctx():
    return htp.Context([TOY_PLUGIN], builtins=False)


def kernels():
    toy = htp.dialects.toy  # the toy scanner recognises `@toy.kernel` / `toy.<op>` by their spelling

    @toy.kernel
    def scale(a):
        b = toy.mul(a, N)
        return b

    @toy.kernel
    def entry(a):
        return scale(a)

    return entry


def test_compile_returns_a_package(ctx, tmp_path):
    pkg = ctx.compile(kernels(), target="toy-sim", out=tmp_path / "pkg", dump_ir="all")
    assert isinstance(pkg, htp.Package)
    assert pkg.path == tmp_path / "pkg" and pkg.path.is_dir()
    assert pkg.manifest["target"] == "toy-sim"
    assert "codegen/toy/scale.txt" in pkg.files and "codegen/toy/entry.txt" in pkg.files
    assert pkg.passes == ["toy.fold", "toy.check", "toy.emit"]
    text = pkg.dump("toy.emit")
    assert "def scale(a):" in text and "def entry(a):" in text
    with pytest.raises(KeyError, match="no dump of 'nope'"):
        pkg.dump("nope")
    # The resolved dialect reaches the host as node attributes of each captured function.
    dumped = json.loads((pkg.path / "ir" / "03_toy.emit.ast.json").read_text())
    fns = dumped["root"]["body"]
    assert [f["_attrs"] for f in fns] == [{"htp.decorator": "kernel", "htp.dialect": "toy"}] * 2


def test_compile_options_force_and_pipeline(ctx, tmp_path):
    out = tmp_path / "pkg"
    ctx.compile(kernels(), target="toy-sim", out=out)
    with pytest.raises(htp.CompileError):
        ctx.compile(kernels(), target="toy-sim", out=out)
    with pytest.raises(htp.CompileError, match="IR.Checked"):
        ctx.compile(kernels(), target="toy-sim", out=out, force=True, pipeline="toy.fold,toy.emit")
    pkg = ctx.compile(kernels(), target="toy-sim", out=out, force=True, pin_timings=True,
                      pipeline=["toy.fold", "toy.check", "toy.emit"])
    assert pkg.passes == ["toy.fold", "toy.check", "toy.emit"]
    assert not any("toy.emit" in n for n in pkg.dumps())


def test_compile_failure_raises_with_rendered_diagnostics(ctx, tmp_path):
    t = htp.dialects.toy

    @t.kernel
    def k(a):
        return a

    with pytest.raises(htp.CompileError) as e:
        ctx.compile(k, target="no-such-target", out=tmp_path / "x")
    assert "error:" in str(e.value)
    assert not (tmp_path / "x").exists()


def test_context_queries(ctx):
    plugins = ctx.plugins()
    assert len(plugins) == 1 and plugins[0]["path"] == os.path.realpath(TOY_PLUGIN)
    d = {x["name"]: x for x in ctx.dialects()}["toy"]
    assert d["plugin"] == plugins[0]["name"] and d["id"] == "toy.dialect"


def test_bad_plugin_raises_plugin_error(tmp_path):
    bad = tmp_path / "htp-bad.so"
    bad.write_bytes(b"not a library")
    with pytest.raises(htp.PluginError, match="htp-bad"):
        htp.Context([str(bad)])


def test_dialect_not_loaded_names_the_plugin(ctx, tmp_path):
    t = htp.dialects.toy  # known: the toy plugin was loaded by another context

    @t.kernel
    def k(a):
        return a

    empty = htp.Context([], builtins=False, use_environment=False)
    with pytest.raises(htp.CaptureError) as e:
        empty.compile(k, target="toy-sim", out=tmp_path / "p")
    (d,) = e.value.diagnostics
    assert d["code"] == "capture.dialect-not-loaded"
    assert "dialect 'toy', which is not loaded" in d["message"]
    plugin = ctx.plugins()[0]["name"]
    assert f"plugin '{plugin}'" in d["message"] and "htp-fixture-toy.so" in d["message"]
    with open(__file__) as f:
        assert f.read().splitlines()[d["span"]["line"] - 1].strip() == "@t.kernel"


def test_stubs_are_generated_from_the_manifests(tmp_path):
    from htp import stubgen
    written = stubgen.write_stubs(str(tmp_path), [TOY_PLUGIN], use_environment=False)
    stub = tmp_path / "dialects" / "toy.pyi"
    assert str(stub) in written
    text = stub.read_text()
    assert "kernel: Any" in text
    compile(text, str(stub), "exec")
    assert (tmp_path / "intrinsics" / "toy.pyi").exists()


def _plugin_copy_with_stubs(tmp_path, stubs):
    """A copy of the toy plugin and its manifest in tmp_path/plugins, shipping `stubs` ({relpath: text})
    in htp-fixture-toy.stubs/ as htp_add_plugin(STUBS) lays them out."""
    import shutil
    d = tmp_path / "plugins"
    d.mkdir()
    lib = d / os.path.basename(TOY_PLUGIN)
    shutil.copy(TOY_PLUGIN, lib)
    shutil.copy(TOY_PLUGIN[:-len(".so")] + ".plugin.json", d)
    for rel, text in stubs.items():
        f = d / (lib.stem + ".stubs") / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return str(lib)


def test_a_shipped_stub_is_preferred_and_completed_with_declared_names(tmp_path):
    from htp import stubgen
    lib = _plugin_copy_with_stubs(tmp_path, {"toy.pyi": "def kernel(fn: object) -> object: ...\n"})
    out = tmp_path / "htp"
    stubgen.write_stubs(str(out), [lib], use_environment=False)
    text = (out / "dialects" / "toy.pyi").read_text()
    assert text.startswith("# Shipped by plugin")
    assert "def kernel(fn: object) -> object: ..." in text
    assert "kernel: Any" not in text and "kernel: _Any" not in text
    assert "add: _Any" in text  # declared by the same-named intrinsic set, absent from the shipped stub
    compile(text, "toy.pyi", "exec")
    # no shipped intrinsics/toy.pyi: the intrinsic set keeps its generated stub
    assert "Generated by htp.stubgen" in (out / "intrinsics" / "toy.pyi").read_text()


def test_a_shipped_intrinsic_set_stub_is_used_for_the_set(tmp_path):
    from htp import stubgen
    lib = _plugin_copy_with_stubs(tmp_path, {"intrinsics/toy.pyi": "def add(a: int, b: int) -> int: ...\n"})
    out = tmp_path / "htp"
    stubgen.write_stubs(str(out), [lib], use_environment=False)
    assert "def add(a: int, b: int) -> int: ..." in (out / "intrinsics" / "toy.pyi").read_text()
    assert "Generated by htp.stubgen" in (out / "dialects" / "toy.pyi").read_text()


def test_a_shipped_stub_with_a_syntax_error_names_its_file(tmp_path):
    from htp import stubgen
    lib = _plugin_copy_with_stubs(tmp_path, {"toy.pyi": "def kernel(:\n"})
    with pytest.raises(SyntaxError) as e:
        stubgen.write_stubs(str(tmp_path / "htp"), [lib], use_environment=False)
    assert e.value.filename.endswith(os.path.join("htp-fixture-toy.stubs", "toy.pyi"))


PROGRAM = """\
from htp.dialects import toy

M = 4

@toy.kernel
def add(a, b):
    return toy.add(a, b) + M
"""


def run_host(tmp_path, source, *extra):
    prog = tmp_path / "prog.py"
    prog.write_text(source)
    env = dict(os.environ, HTP_PYTHON=sys.executable)
    return subprocess.run([HTP_HOST, "--plugins", TOY_PLUGIN, "compile", str(prog), "-t", "toy-sim",
                           "-o", str(tmp_path / "out"), *extra], capture_output=True, text=True, env=env,
                          timeout=120), prog


@needs_host
def test_htp_host_compiles_a_python_program(tmp_path):
    r, _ = run_host(tmp_path, PROGRAM)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["target"] == "toy-sim"
    assert (tmp_path / "out" / "codegen" / "toy" / "add.txt").exists()


@needs_host
def test_htp_host_syntax_error_is_file_line_col(tmp_path):
    r, prog = run_host(tmp_path, "from htp.dialects import toy\n\n@toy.kernel\ndef f(a):\n    return a +\n")
    assert r.returncode == 1
    assert f"{prog}:5:15: error: SyntaxError: invalid syntax" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


@needs_host
def test_htp_host_unresolved_name(tmp_path):
    src = textwrap.dedent("""\
        from htp.dialects import toy

        @toy.kernel
        def f(a):
            return a + missing_name
        """)
    r, prog = run_host(tmp_path, src)
    assert r.returncode == 1
    assert f"{prog}:5:16: error: name 'missing_name' is not defined" in r.stderr, r.stderr


@needs_host
def test_htp_host_runtime_error_in_program(tmp_path):
    r, prog = run_host(tmp_path, "import htp\nraise RuntimeError('boom')\n")
    assert r.returncode == 1
    assert f"{prog}:2:1: error: running" in r.stderr and "boom" in r.stderr, r.stderr



def test_compile_releases_the_gil(ctx, tmp_path):
    import copy
    import threading
    import time

    from htp import _ast_json
    from htp.capture import capture

    doc = capture(kernels())
    fn = doc["root"]["body"][0]
    body = []
    for i in range(800):  # enough host work (scan, passes, 800 emitted files) to take a while
        f = copy.deepcopy(fn)
        f["name"] = f"k{i}"
        body.append(f)
    doc["root"]["body"] = body
    text = _ast_json.dumps(doc)

    state = {"gap": 0.0, "done": False}

    def spin():  # the longest time this thread went without running Python
        last = time.perf_counter()
        while not state["done"]:
            now = time.perf_counter()
            state["gap"] = max(state["gap"], now - last)
            last = now

    th = threading.Thread(target=spin)
    th.start()
    try:
        time.sleep(0.02)
        state["gap"] = 0.0
        t0 = time.perf_counter()
        ctx._host.compile(text, "toy-sim", str(tmp_path / "big"), {})
        took = time.perf_counter() - t0
        gap = state["gap"]
    finally:
        state["done"] = True
        th.join()
    # Holding the GIL for the whole call would stop the other thread for all of it.
    assert gap < 0.5 * took, (gap, took)


def test_failing_pass_with_keep_failed(ctx, tmp_path):
    toy = htp.dialects.toy

    @toy.kernel
    def boom(a):
        return toy.explode(a)

    out = tmp_path / "pkg"
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(boom, target="toy-sim", out=out, keep_failed=True)
    text = str(e.value)
    assert "toy.explode cannot be lowered" in text and f"{__file__}:" in text, text
    assert "kept the failed compile in" in text
    assert not out.exists() and (tmp_path / "pkg.failed").is_dir()


@needs_host
def test_htp_host_program_without_captured_functions(tmp_path):
    r, prog = run_host(tmp_path, "X = 1\n")
    assert r.returncode == 1
    assert f"{prog}:1:1: error: '{prog}' defines no captured function" in r.stderr, r.stderr


def test_a_loaded_plugin_of_the_dialects_plugin_name_without_it_is_named(ctx, tmp_path):
    # Another build of the plugin that declares dialect 'toy' (here a Python extension of that plugin's name)
    # lacks the dialect: the reason said "load it with htp.Context(plugins=[...])", though a plugin of that name
    # was loaded, and loading the other would not help.
    t = htp.dialects.toy

    @t.kernel
    def k(a):
        return a

    plugin = ctx.plugins()[0]["name"]
    ext = tmp_path / "other_build.py"
    ext.write_text(f"from htp.extension import Extension\next = Extension({plugin!r}, version='9.0.0')\n")
    other = htp.Context([str(ext)], builtins=False, use_environment=False)
    with pytest.raises(htp.CaptureError) as e:
        other.compile(k, target="toy-sim", out=tmp_path / "p")
    (d,) = e.value.diagnostics
    assert d["code"] == "capture.dialect-not-loaded"
    assert (f"plugin '{plugin}' is loaded ({ext}) but registers no dialect 'toy', unlike the plugin of that name "
            f"at {os.path.realpath(TOY_PLUGIN)}") in d["message"], d["message"]
    assert "load it" not in d["message"]
