"""How pto-a2a3sim builds a package's kernels (docs/backends/pto-sim.md §5): the simulator headers every
kernel starts with are precompiled once per cache, compiler and flags, then every kernel compile of any package
in that cache reads the precompiled form; the numbers do not change. The build tree precompiles them for the
default compiler next to the simulator headers, so a first run in an empty cache builds none. Needs
HTP_PLUGIN_DIR (set by ctest)."""
import os
import pathlib
import shutil

import numpy as np

import htp

PROGRAM = '''
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add, exp, muls


@kernel
def first(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    store(y, exp(load(x)))


@kernel
def second(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    store(y, add(muls(load(x), 3.0), load(x)))
'''


def load(tmp_path):
    import importlib.util
    src = tmp_path / "build_program.py"
    src.write_text(PROGRAM)
    spec = importlib.util.spec_from_file_location("build_program", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_first_run_in_an_empty_cache_reads_the_build_trees_precompiled_headers(tmp_path):
    module, ctx = load(tmp_path), htp.Context()
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    pkg = ctx.compile(module.first, target="pto-a2a3sim", out=tmp_path / "a")
    r = htp.bind(pkg, ctx).run(x=x, cache_dir=tmp_path / "cache")
    np.testing.assert_allclose(np.asarray(r["y"]), np.exp(x), rtol=1e-6)
    # The build tree precompiled them next to the simulator headers (htp_ptosim_pch): nothing to build here.
    assert r.report["build"]["precompiled_headers_built"] == 0 and r.report["build"]["compiler_invocations"] == 2
    assert not (tmp_path / "cache" / "pto-sim" / "pch").exists()


def test_the_simulator_headers_are_precompiled_once_per_cache(tmp_path):
    # Headers the build tree has no precompiled form of (a copy elsewhere, through option sim_include): the
    # cache builds one per flag set, once, and every later kernel compile in that cache reads it.
    module, ctx = load(tmp_path), htp.Context()
    include = pathlib.Path(os.environ["HTP_PLUGIN_DIR"]) / "htp-backend-pto.data/ptosim/include"
    copy = tmp_path / "headers" / "include"
    shutil.copytree(include, copy)
    options = {"sim_include": str(copy)}
    cache = tmp_path / "cache"
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    a = ctx.compile(module.first, target="pto-a2a3sim", out=tmp_path / "a")
    r = htp.bind(a, ctx).run(x=x, cache_dir=cache, options=options)
    np.testing.assert_allclose(np.asarray(r["y"]), np.exp(x), rtol=1e-6)
    # One AIV kernel and the orchestration: two precompiled preludes (the kernel headers for the AIV flags and
    # the orchestration API), each read by its source's compile.
    assert r.report["build"]["precompiled_headers_built"] == 2 and r.report["build"]["compiler_invocations"] == 2
    pch = list((cache / "pto-sim" / "pch").glob("*/prelude.hpp.gch"))
    assert len(pch) == 2 and all(p.stat().st_size > 0 for p in pch)
    assert sorted("pto_orchestration_api.h" in (p.parent / "prelude.hpp").read_text() for p in pch) == [False, True]
    # Another package in the same cache: its kernel is compiled, the prelude is not built again.
    b = ctx.compile(module.second, target="pto-a2a3sim", out=tmp_path / "b")
    r = htp.bind(b, ctx).run(x=x, cache_dir=cache, options=options)
    np.testing.assert_array_equal(np.asarray(r["y"]), x * np.float32(3) + x)
    assert r.report["build"]["precompiled_headers_built"] == 0 and r.report["build"]["misses"] == 2
