"""The PEP 517 / PEP 660 build backend of HTP (pyproject.toml): CMake builds and installs the project, this
module packs the install tree into a wheel with zipfile, so building needs no Python package beyond the
standard library.

The build directory is `--config-settings build-dir=DIR`, else $HTP_BUILD_DIR, else <root>/build. One that
is already configured (has a CMakeCache.txt) is reused as it is, so `pip install .` after a build takes
seconds; otherwise it is configured with the `default` preset. Then `cmake --build` and, for a wheel,
`cmake --install --strip` into a staging prefix.

Wheel layout: the install prefix stays whole inside the package, so that `pip uninstall htp` removes
everything and the host finds its plugins (<libdir>/htp/plugins beside libhtp-host.so) unaided:
  htp/              the Python package, <prefix>/<HTP_INSTALL_PYTHONDIR>/htp (.py, _htp, .pyi, py.typed)
  htp/_prefix/      the rest of the prefix: bin/htp-host, lib/libhtp-host.so.N, lib/htp/plugins, include/htp,
                    lib/cmake/HTP (plugin builds: find_package(HTP) with HTP_DIR pointing there)
  htp-V.dist-info/  METADATA, WHEEL, entry_points.txt (the htp-host console script), RECORD
`_prefix` is HTP_WHEEL_PREFIX_SUBDIR of CMakeLists.txt, on which _htp's RPATH and the host's search for the
Python frontend rely.

An editable wheel holds only a .pth file naming the build tree's python/ directory (a complete htp package,
refreshed by every build) and the same dist-info."""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import NoReturn

PREFIX_SUBDIR = "_prefix"  # HTP_WHEEL_PREFIX_SUBDIR in CMakeLists.txt

# The programs a build runs, with the Debian package of each.
TOOLS = {"cmake": "cmake", "ninja": "ninja-build", "c++": "g++", "readelf": "binutils"}

# Zip entries get a fixed time, so that one install tree always gives the same wheel.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _fail(message: str) -> NoReturn:
    # SystemExit rather than an exception: pip shows the message, not a traceback of this module.
    raise SystemExit(f"htp_build_backend: error: {message}")


def _root() -> Path:
    return Path.cwd().resolve()  # PEP 517 runs every hook in the source tree's root


def _project(root: Path) -> dict:
    """pyproject.toml's [project], with the version and description of CMakeLists.txt's project(HTP ...)."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    call = re.search(r"\bproject\(\s*HTP\s([^)]*)\)", (root / "CMakeLists.txt").read_text())
    version = call and re.search(r"\bVERSION\s+([0-9][0-9.]*)", call[1])
    summary = call and re.search(r'\bDESCRIPTION\s+"([^"]*)"', call[1])
    if not version or not summary:
        _fail('CMakeLists.txt has no project(HTP VERSION <x.y.z> ... DESCRIPTION "...")')
    return {**project, "version": version[1], "description": summary[1]}


def _dist(project: dict) -> str:
    """<name>-<version>, the stem of the wheel, sdist and dist-info names."""
    return f"{re.sub(r'[-_.]+', '_', project['name']).lower()}-{project['version']}"


def _tag() -> str:
    """The wheel tag of the running interpreter, the one _htp must be built for (see _check_extension)."""
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return f"{python}-{python}-{re.sub(r'[-.]', '_', sysconfig.get_platform())}"


def _metadata(project: dict) -> dict[str, bytes]:
    """The dist-info files other than RECORD, by name."""
    metadata = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
                f"Summary: {project['description']}"]
    metadata += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    wheel = ["Wheel-Version: 1.0", "Generator: htp_build_backend", "Root-Is-Purelib: false", f"Tag: {_tag()}"]
    scripts = ["[console_scripts]"] + [f"{k} = {v}" for k, v in project.get("scripts", {}).items()]
    return {name: ("\n".join(lines) + "\n").encode()
            for name, lines in (("METADATA", metadata), ("WHEEL", wheel), ("entry_points.txt", scripts))}


def _zip_entry(name: str, mode: int) -> zipfile.ZipInfo:
    entry = zipfile.ZipInfo(name, ZIP_TIME)
    entry.external_attr = (0o100000 | mode) << 16  # a regular file; pip keeps the executable bits
    entry.compress_type = zipfile.ZIP_DEFLATED
    return entry


def _write_wheel(directory: str, project: dict, files: list[tuple[str, Path | bytes]]) -> str:
    """Writes the wheel of `files` (archive name, file or contents) and the dist-info, RECORD last;
    returns the wheel's file name."""
    info = f"{_dist(project)}.dist-info"
    entries = files + [(f"{info}/{name}", data) for name, data in _metadata(project).items()]
    record = io.StringIO()
    rows = csv.writer(record, lineterminator="\n")
    name = f"{_dist(project)}-{_tag()}.whl"
    with zipfile.ZipFile(Path(directory) / name, "w") as wheel:
        for arcname, source in entries:
            if isinstance(source, bytes):
                data, mode = source, 0o644
            else:
                data, mode = source.read_bytes(), 0o755 if source.stat().st_mode & 0o111 else 0o644
            wheel.writestr(_zip_entry(arcname, mode), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.writerow([arcname, f"sha256={digest}", len(data)])
        rows.writerow([f"{info}/RECORD", "", ""])
        wheel.writestr(_zip_entry(f"{info}/RECORD", 0o644), record.getvalue())
    return name


def _missing_packages(root: Path) -> str:
    """What scripts/bootstrap.sh --check finds missing, as a sentence to add to an error; '' when nothing is
    missing or the check cannot tell (not Debian)."""
    try:
        check = subprocess.run(["bash", str(root / "scripts" / "bootstrap.sh"), "--check"],
                               capture_output=True, text=True)
    except OSError:
        return ""
    if check.returncode != 1:
        return ""
    missing = check.stdout.strip().removeprefix("bootstrap: missing ")
    return f"; missing Debian packages: {missing} (install them with scripts/bootstrap.sh)"


def _run(cmd: list[str], root: Path) -> None:
    print("htp_build_backend:", " ".join(cmd), file=sys.stderr, flush=True)
    if subprocess.run(cmd, cwd=root).returncode != 0:
        _fail(f"'{' '.join(cmd)}' failed (its output is above){_missing_packages(root)}")


def _check_tools() -> None:
    missing = [f"{tool} (Debian package {package})" for tool, package in TOOLS.items() if not shutil.which(tool)]
    if missing:
        _fail(f"cannot build HTP without {', '.join(missing)}: run scripts/bootstrap.sh, which installs "
              "the Debian packages HTP's build needs")


def _cache(build: Path) -> dict[str, str]:
    """CMakeCache.txt's NAME:TYPE=VALUE entries."""
    lines = (build / "CMakeCache.txt").read_text().splitlines()
    return {m[1]: m[2] for m in map(re.compile(r"([A-Za-z_][\w.+-]*):\w+=(.*)").fullmatch, lines) if m}


def _on(value: str | None) -> bool:
    return (value or "").upper() in ("1", "ON", "YES", "TRUE", "Y")


def _build(root: Path, config_settings: dict | None) -> tuple[Path, dict[str, str]]:
    """Configures (unless already configured) and builds the build directory; returns it and its cache."""
    build = Path(root, (config_settings or {}).get("build-dir") or os.environ.get("HTP_BUILD_DIR") or "build")
    _check_tools()
    if not (build / "CMakeCache.txt").is_file():
        _run(["cmake", "--preset", "default", "-B", str(build)], root)
    cache = _cache(build)
    if Path(cache.get("CMAKE_HOME_DIRECTORY", "")).resolve() != root:
        _fail(f"{build} is the build directory of {cache.get('CMAKE_HOME_DIRECTORY')}, not of {root}; give this "
              "tree's with --config-settings build-dir=DIR or HTP_BUILD_DIR")
    if not _on(cache.get("HTP_BUILD_PYTHON", "ON")) or _on(cache.get("HTP_SANITIZE")):
        _fail(f"{build} is configured without the _htp module a plain interpreter can import "
              "(HTP_BUILD_PYTHON=OFF or HTP_SANITIZE=ON); build the wheel from a default-preset build directory")
    _run(["cmake", "--build", str(build)], root)
    return build, cache


def _check_extension(package: Path, cache: dict[str, str]) -> None:
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if not (package / f"_htp{suffix}").is_file():
        built = ", ".join(sorted(p.name for p in package.glob("_htp*"))) or "no _htp module"
        _fail(f"{package} has {built}, not _htp{suffix} for this interpreter ({sys.executable}): the build "
              f"directory is configured with HTP_PYTHON={cache.get('HTP_PYTHON')}; reconfigure it with "
              f"-DHTP_PYTHON={getattr(sys, '_base_executable', sys.executable)}")


def _soname(library: Path) -> str | None:
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dynamic)
    return m[1] if m else None


def _collapse_symlinks(prefix: Path) -> None:
    """Wheels hold no symlinks, and the install's only ones are shared-library names (libhtp-host.so ->
    libhtp-host.so.0 -> libhtp-host.so.0.1.0). Keeps one file under the name the dynamic loader looks up (the
    SONAME), drops the other names and points the CMake package files (HTPTargets-*.cmake) at the kept one."""
    names: dict[Path, list[Path]] = {}
    for path in sorted(prefix.rglob("*")):
        if path.is_symlink():
            target = path.resolve()
            if target.parent != path.parent.resolve() or not target.is_file():
                _fail(f"unexpected symlink in the install tree: {path} -> {os.readlink(path)}")
            names.setdefault(target, []).append(path)
    renamed: dict[str, str] = {}
    for target, links in names.items():
        all_names = {target.name, *(link.name for link in links)}
        soname = _soname(target)
        if soname not in all_names:
            _fail(f"{target} (SONAME {soname}) is installed with symlinks that are not its SONAME: {sorted(all_names)}")
        for link in links:
            link.unlink()
        target.rename(target.with_name(soname))
        renamed.update({name: soname for name in all_names if name != soname})
    if not renamed:
        return
    old_names = "|".join(map(re.escape, sorted(renamed, key=len, reverse=True)))
    reference = re.compile(rf'(?<=/)({old_names})(?=["\s;)])')
    for cmake_file in prefix.rglob("*.cmake"):
        text = cmake_file.read_text()
        if reference.search(text):
            cmake_file.write_text(reference.sub(lambda m: renamed[m[1]], text))


def _wheel_files(prefix: Path, python_dir: str) -> list[tuple[str, Path]]:
    """Archive name and file of everything installed: the htp package at htp/, the rest under htp/_prefix/."""
    package = prefix / python_dir / "htp"
    files = []
    for path in sorted(p for p in prefix.rglob("*") if p.is_file()):
        if path.is_relative_to(package):
            files.append((f"htp/{path.relative_to(package).as_posix()}", path))
        else:
            files.append((f"htp/{PREFIX_SUBDIR}/{path.relative_to(prefix).as_posix()}", path))
    return files


# --- PEP 517 / PEP 660 hooks ----------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project(_root())
    info = Path(metadata_directory) / f"{_dist(project)}.dist-info"
    info.mkdir()
    for name, data in _metadata(project).items():
        (info / name).write_bytes(data)
    return info.name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    root = _root()
    project = _project(root)
    build, cache = _build(root, config_settings)
    python_dir = cache.get("HTP_INSTALL_PYTHONDIR", "lib/python3/dist-packages")
    with tempfile.TemporaryDirectory(prefix="htp-wheel-") as staging:
        prefix = Path(staging)
        _run(["cmake", "--install", str(build), "--prefix", str(prefix), "--strip"], root)
        _check_extension(prefix / python_dir / "htp", cache)
        _collapse_symlinks(prefix)
        return _write_wheel(wheel_directory, project, _wheel_files(prefix, python_dir))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    root = _root()
    project = _project(root)
    build, cache = _build(root, config_settings)
    python = (build / "python").resolve()
    _check_extension(python / "htp", cache)
    return _write_wheel(wheel_directory, project, [(f"__editable__.{_dist(project)}.pth", f"{python}\n".encode())])


def build_sdist(sdist_directory, config_settings=None):
    """<name>-<version>.tar.gz: the files git tracks (as in the work tree) and PKG-INFO."""
    root = _root()
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True)
    if tracked.returncode != 0:
        _fail(f"an sdist holds the files git tracks, and {root} is not a git checkout: "
              f"{tracked.stderr.decode().strip()}")
    project = _project(root)
    base = _dist(project)
    with tarfile.open(Path(sdist_directory) / f"{base}.tar.gz", "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for rel in sorted(filter(None, tracked.stdout.decode().split("\0"))):
            sdist.add(root / rel, f"{base}/{rel}", recursive=False)
        pkg_info = _metadata(project)["METADATA"]
        entry = tarfile.TarInfo(f"{base}/PKG-INFO")
        entry.size, entry.mode = len(pkg_info), 0o644
        sdist.addfile(entry, io.BytesIO(pkg_info))
    return f"{base}.tar.gz"
