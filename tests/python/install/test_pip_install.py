"""`pip install .` with the in-tree build backend (scripts/packaging/htp_build_backend.py): offline, into a
fresh venv, reusing the build directory $HTP_BUILD_DIR (a no-op build, not a cold one). From outside the tree,
with no PYTHONPATH or HTP_* variable, the installed package runs an example on pto-a2a3sim, its htp-host
console script lists and uses the built-in plugins, a third-party plugin builds against the SDK inside the
package, and `pip uninstall` leaves nothing behind. Also the editable install, the sdist and the backend's
error on a machine without the build tools."""
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUILD = Path(os.environ.get("HTP_BUILD_DIR", ROOT / "build"))
BUILTIN_PLUGINS = ["backend-aie", "backend-pto", "dialect-csp", "dialect-tile", "dialect-wsp", "layout-axe"]


def run(cmd, *, env, cwd, check=True):
    r = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True)
    if check and r.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}")
    return r


def clean_env(home: Path) -> dict:
    """No PYTHONPATH, HTP_PLUGIN_PATH or other HTP_* variable; a fresh HOME, so HTP's build cache is empty."""
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}


def pip_env(home: Path) -> dict:
    """What the backend's (no-op) build needs: this build directory, and the real HOME for ccache's settings
    should anything be stale; no pip configuration or cache."""
    return {**clean_env(home), "HOME": os.environ.get("HOME", str(home)), "HTP_BUILD_DIR": str(BUILD),
            "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def make_venv(path: Path, home: Path) -> Path:
    run([sys.executable, "-m", "venv", "--system-site-packages", path], env=clean_env(home), cwd=path.parent)
    return path


def venv_files(venv: Path) -> set:
    # pip writes bytecode for itself while it runs; only the rest must be as before.
    return {p.relative_to(venv) for p in venv.rglob("*") if "__pycache__" not in p.parts}


def site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("pip")


@pytest.fixture(scope="module")
def installed(tmp):
    """A venv with `pip install .`, and the venv's files before it."""
    home = tmp / "home"
    home.mkdir()
    venv = make_venv(tmp / "venv", home)
    before = venv_files(venv)
    run([venv / "bin" / "pip", "install", "--no-index", "--no-build-isolation", ROOT], env=pip_env(home), cwd=tmp)
    return venv, home, before


def test_package_layout(installed):
    venv, _, _ = installed
    htp = site_packages(venv) / "htp"
    assert (htp / "py.typed").is_file()
    assert (htp / "dialects" / "tile.pyi").is_file()
    prefix = htp / "_prefix"
    assert (prefix / "bin" / "htp-host").is_file()
    plugins = prefix / "lib" / "htp" / "plugins"
    for name in BUILTIN_PLUGINS:
        assert (plugins / f"htp-{name}.so").is_file() and (plugins / f"htp-{name}.plugin.json").is_file()
    assert any((plugins / "htp-backend-pto.data").rglob("*.h*")), "backend-pto's runtime headers"
    # One copy of the host library, under its SONAME (a wheel has no symlinks).
    assert sorted(p.name for p in (prefix / "lib").glob("libhtp-host*")) == ["libhtp-host.so.0"]
    assert (prefix / "include" / "htp" / "abi.h").is_file()
    assert (prefix / "lib" / "cmake" / "HTP" / "HTPConfig.cmake").is_file()


def test_example_runs_from_outside_the_tree(installed, tmp):
    venv, home, _ = installed
    work = tmp / "example"
    work.mkdir()
    env = clean_env(home)
    where = run([venv / "bin" / "python", "-c", "import htp, htp._htp as h; print(htp.__file__); "
                 "print(h.builtin_plugin_dir())"], env=env, cwd=work).stdout.split()
    assert all(Path(p).is_relative_to(site_packages(venv) / "htp") for p in where), where
    r = run([venv / "bin" / "python", ROOT / "examples" / "vector_add.py", "--target", "pto-a2a3sim",
             "--out", work / "pkg", "--quiet"], env=env, cwd=work)
    assert re.search(r"^  C: max \|error\| vs NumPy = \S+  ok$", r.stdout, re.M), r.stdout


def test_example_runs_with_torch_tensors(installed, tmp):
    pytest.importorskip("torch", reason="python3-torch is not installed (scripts/bootstrap.sh installs it)")
    venv, home, _ = installed
    work = tmp / "torch"
    work.mkdir()
    program = work / "torch_vector_add.py"
    program.write_text(
        "import sys, torch, htp\n"
        f"sys.path.insert(0, {str(ROOT / 'examples')!r})\n"
        "import vector_add as va\n"
        "ctx = htp.Context()\n"
        f"pkg = ctx.compile(va.vector_add, target='pto-a2a3sim', out={str(work / 'pkg')!r})\n"
        "A, B = torch.randn(va.M, va.N), torch.randn(va.M, va.N)\n"
        "r = htp.bind(pkg, ctx).run(A=A, B=B)\n"
        "assert isinstance(r['C'], torch.Tensor) and torch.equal(r['C'], A + B)\n"
        "print('torch ok', r.report['arguments']['A'])\n")
    out = run([venv / "bin" / "python", program], env=clean_env(home), cwd=work).stdout
    assert "torch ok caller memory (zero-copy)" in out, out


def test_console_script(installed, tmp):
    venv, home, _ = installed
    env = clean_env(home)
    listed = run([venv / "bin" / "htp-host", "plugins", "list"], env=env, cwd=tmp).stdout
    for name in BUILTIN_PLUGINS:
        assert name in listed, listed
    # compile PROG.py finds the Python frontend inside the installed package and runs it with the venv's python.
    run([venv / "bin" / "htp-host", "compile", ROOT / "examples" / "vector_add.py", "--target", "pto-a2a3sim",
         "-o", tmp / "cli-pkg"], env=env, cwd=tmp)
    run([venv / "bin" / "htp-host", "verify", tmp / "cli-pkg"], env=env, cwd=tmp)


def test_plugin_builds_against_the_installed_sdk(installed, tmp):
    venv, home, _ = installed
    cmake_dir = site_packages(venv) / "htp" / "_prefix" / "lib" / "cmake" / "HTP"
    build = tmp / "hello"
    env = clean_env(home)
    run(["cmake", "-S", ROOT / "tests" / "abi" / "out_of_tree", "-B", build, "-G", "Ninja", f"-DHTP_DIR={cmake_dir}"],
        env=env, cwd=tmp)
    run(["cmake", "--build", build], env=env, cwd=tmp)
    listed = run([venv / "bin" / "htp-host", "--plugins", build / "plugins" / "htp-hello.so", "plugins", "list"],
                 env=env, cwd=tmp).stdout
    assert "hello" in listed, listed


def test_uninstall_removes_everything(installed, tmp):
    """Last in this file: it uninstalls the module's install."""
    venv, home, before = installed
    run([venv / "bin" / "pip", "uninstall", "-y", "htp"], env=pip_env(home), cwd=tmp)
    assert not (site_packages(venv) / "htp").exists()
    assert not (venv / "bin" / "htp-host").exists()
    assert venv_files(venv) == before


def test_editable_install(tmp):
    home = tmp / "home-editable"
    home.mkdir()
    venv = make_venv(tmp / "venv-editable", home)
    before = venv_files(venv)
    run([venv / "bin" / "pip", "install", "--no-index", "--no-build-isolation", "-e", ROOT], env=pip_env(home),
        cwd=tmp)
    env = clean_env(home)
    where = run([venv / "bin" / "python", "-c", "import htp; print(htp.__file__)"], env=env, cwd=tmp).stdout
    assert Path(where.strip()).parent == (BUILD / "python" / "htp").resolve()
    listed = run([venv / "bin" / "htp-host", "plugins", "list"], env=env, cwd=tmp).stdout
    assert all(name in listed for name in BUILTIN_PLUGINS), listed
    run([venv / "bin" / "pip", "uninstall", "-y", "htp"], env=pip_env(home), cwd=tmp)
    assert venv_files(venv) == before


def backend(hook, *args, env):
    """Calls a hook of the backend in a child interpreter, as pip does, in the source tree."""
    code = f"import sys, htp_build_backend as b; print(b.{hook}(*sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT / "scripts" / "packaging")})


def test_missing_build_tools_are_named(tmp):
    empty = tmp / "no-tools"
    empty.mkdir()
    r = backend("build_wheel", tmp, env={"PATH": str(empty), "HTP_BUILD_DIR": str(BUILD)})
    assert r.returncode != 0
    for expected in ("cmake (Debian package cmake)", "ninja (Debian package ninja-build)",
                     "c++ (Debian package g++)", "scripts/bootstrap.sh"):
        assert expected in r.stderr, r.stderr
    assert "Traceback" not in r.stderr, r.stderr


def test_sdist(tmp):
    out = tmp / "sdist"
    out.mkdir()
    r = backend("build_sdist", out, env={"PATH": os.environ["PATH"]})
    assert r.returncode == 0, r.stderr
    with tarfile.open(out / r.stdout.strip()) as sdist:
        names = set(sdist.getnames())
    base = r.stdout.strip().removesuffix(".tar.gz")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert names == {f"{base}/{rel}" for rel in [*tracked.split("\n"), "PKG-INFO"] if rel}
