"""Packages that cannot be used to escape or stall (issue: hostile inputs): verify, inspect and run read
regular files only, write run outputs only into real directories, check entrypoint shapes and dtypes, never
overflow sizes, name no host path, and — with a key — catch an edit whose hashes were rewritten.

Every htp-host call has a time limit, so a reader that blocks (a FIFO) fails the test instead of hanging it."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import struct
import subprocess

import numpy as np
import pytest

HOST = os.environ["HTP_HOST"]
EXAMPLES = pathlib.Path(os.environ["HTP_EXAMPLES"])
LIMIT_S = 60


def htp(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([HOST, *map(str, args)], capture_output=True, text=True, timeout=LIMIT_S, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("vadd") / "pkg"
    r = htp("compile", EXAMPLES / "vector_add.py", "--target", "pto-a2a3sim", "-o", out)
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture
def pkg(built, tmp_path):
    copy = tmp_path / "pkg"
    shutil.copytree(built, copy, symlinks=True)
    return copy


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(0)
    paths = {}
    for name in ("A", "B"):
        paths[name] = tmp_path / f"{name}.npy"
        np.save(paths[name], rng.standard_normal((128, 64), dtype="float32"))
    return paths


def run_args(pkg, inputs, *extra):
    return ["run", pkg, "-i", f"A={inputs['A']}", "-i", f"B={inputs['B']}", *extra]


def test_a_manifest_that_is_a_fifo_is_refused_at_once_by_verify_inspect_and_run(pkg, inputs):
    (pkg / "manifest.json").unlink()
    os.mkfifo(pkg / "manifest.json")
    for args in (["verify", pkg], ["inspect", pkg], run_args(pkg, inputs)):
        r = htp(*args)
        assert r.returncode == 1, (args, r.stderr)
        assert "manifest.json' is a FIFO, not a regular file; refusing to read it [package.special-file]" in r.stderr


def test_run_refuses_to_write_through_a_symlinked_logs_directory(pkg, inputs, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (pkg / "logs").mkdir(exist_ok=True)
    shutil.rmtree(pkg / "logs")
    (pkg / "logs").symlink_to(elsewhere, target_is_directory=True)
    r = htp(*run_args(pkg, inputs))
    assert r.returncode == 1, r.stderr
    assert "logs' is a symlink" in r.stderr, r.stderr
    assert list(elsewhere.iterdir()) == [], "run wrote outside the package"
    # Without verification the run's own check refuses, before anything is removed or written.
    import htp as htp_py
    with pytest.raises(Exception) as e:
        htp_py.bind(pkg).run(verify=False, A=np.load(inputs["A"]), B=np.load(inputs["B"]))
    assert "logs' is a symlink, not a directory; refusing to write run outputs through it" in str(e.value)
    assert list(elsewhere.iterdir()) == [], "run wrote outside the package"


def test_verify_reports_a_symlinked_logs_directory(pkg, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(pkg / "logs", ignore_errors=True)
    (pkg / "logs").symlink_to(elsewhere, target_is_directory=True)
    r = htp("verify", pkg)
    assert r.returncode == 1
    assert "error: 'logs' is a symlink; a package holds regular files and directories only [package.special-file]" in r.stderr


def test_verify_reports_an_unlisted_fifo(pkg):
    os.mkfifo(pkg / "codegen" / "pipe")
    r = htp("verify", pkg)
    assert r.returncode == 1
    assert "error: 'codegen/pipe' is a FIFO; a package holds regular files and directories only [package.special-file]" in r.stderr


def test_verify_reports_a_symlinked_directory_and_does_not_enter_it(pkg, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (pkg / "codegen" / "more").symlink_to(outside, target_is_directory=True)
    r = htp("verify", pkg)
    assert r.returncode == 1
    assert "'codegen/more' is a symlink" in r.stderr and "secret.txt" not in r.stderr, r.stderr


def test_a_listed_file_replaced_by_a_symlink_is_not_followed(pkg, tmp_path):
    target = pkg / "ir" / "00_source.py"
    copy = tmp_path / "copy.py"
    shutil.copy(target, copy)
    target.unlink()
    target.symlink_to(copy)
    r = htp("verify", pkg)
    assert r.returncode == 1
    assert "'ir/00_source.py' is a symlink; a package holds regular files and directories only" in r.stderr


@pytest.mark.parametrize("change,message", [
    ({"shape": [2**62, 2**62]}, "shape [4611686018427387904,4611686018427387904] of f32 is larger than 281474976710656 bytes"),
    ({"shape": [-1, 64]}, "dimension -1 of shape [-1,64] is not a non-negative integer or a name"),
    ({"dtype": "f1024"}, 'unknown dtype "f1024"'),
], ids=["huge", "negative", "dtype"])
def test_verify_checks_entrypoint_shapes_and_dtypes_as_run_does(pkg, change, message):
    manifest = json.loads((pkg / "manifest.json").read_text())
    manifest["entrypoints"][0]["params"][0].update(change)
    (pkg / "manifest.json").write_text(json.dumps(manifest, indent=2))
    r = htp("verify", pkg)
    assert r.returncode == 1
    assert f"error: entry 'vector_add' parameter 'A': {message} [package.entrypoint]" in r.stderr, r.stderr


def test_an_npy_header_claiming_2_62_by_2_62_elements_is_an_error_not_zero_bytes(pkg, inputs, tmp_path):
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }"
    header += b" " * (64 - (10 + len(header) + 1) % 64) + b"\n"
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header)
    r = htp("run", pkg, "-i", f"A={bad}", "-i", f"B={inputs['B']}")
    assert r.returncode == 1
    assert "has more elements than 64 bits count [run.npy]" in r.stderr, r.stderr


# (aie-npu1's mapping.json, fifos.json and orchestration.json named the source by its absolute path, so the
# same program compiled in two directories gave two packages.)
@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_manifests_name_no_host_path_and_are_the_same_in_any_directory(tmp_path, target):
    manifests = []
    for where in ("one", "two/deeper"):
        d = tmp_path / where
        d.mkdir(parents=True)
        shutil.copy(EXAMPLES / "vector_add.py", d / "vector_add.py")
        r = htp("compile", "vector_add.py", "--target", target, "-o", "pkg", cwd=d)
        assert r.returncode == 0, r.stderr
        text = (d / "pkg" / "manifest.json").read_text()
        assert str(tmp_path) not in text and '"file": "/' not in text
        manifests.append(text)
    assert manifests[0] == manifests[1]
    assert '"file": "vector_add.py"' in manifests[0]


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
@pytest.mark.parametrize("example", ["vector_add.py", "moe.py"])
def test_no_package_file_names_the_compiling_directory(tmp_path, target, example):
    d = tmp_path / "src"
    d.mkdir()
    shutil.copy(EXAMPLES / example, d / example)
    r = htp("compile", example, "--target", target, "-o", "pkg", "--dump-ir", "all", cwd=d)
    assert r.returncode == 0, r.stderr
    # htp.lock.json pins the plugin files by path on purpose (it is what --locked compares with).
    named = [str(f.relative_to(d / "pkg")) for f in sorted((d / "pkg").rglob("*"))
             if f.is_file() and f.name != "htp.lock.json" and str(d).encode() in f.read_bytes()]
    assert named == [], f"files naming {d}: {named}"


def rehash(pkg, rel, new_text):
    """Edits a package file and rewrites its sha256 and size in the manifest: what integrity cannot catch."""
    (pkg / rel).write_text(new_text)
    manifest = json.loads((pkg / "manifest.json").read_text())
    digest = subprocess.run(["sha256sum", pkg / rel], capture_output=True, text=True, check=True).stdout.split()[0]
    for f in manifest["files"]:
        if f["path"] == rel:
            f["sha256"], f["size"] = digest, (pkg / rel).stat().st_size
    (pkg / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def test_a_signed_package_verifies_with_its_key_and_a_rehashed_edit_is_caught(pkg, tmp_path):
    key = tmp_path / "key.pem"
    assert htp("keygen", key).returncode == 0
    assert htp("sign", pkg, "--key", key).returncode == 0
    ok = htp("verify", pkg, "--key", f"{key}.pub")
    assert ok.returncode == 0, ok.stderr
    assert "signature" in ok.stdout
    kernel = next(p for p in (pkg / "codegen" / "pto" / "kernels" / "aiv").iterdir())
    rel = str(kernel.relative_to(pkg))
    rehash(pkg, rel, kernel.read_text() + "\n// an edit\n")
    # Without the key, the signature's record of the manifest it signed catches it (plain verify said "ok", and
    # run ran the edited kernel); an unsigned package's integrity alone cannot.
    plain = htp("verify", pkg)
    assert plain.returncode == 1 and "[package.signature-stale]" in plain.stderr, plain.stderr
    unsigned = tmp_path / "unsigned"
    shutil.copytree(pkg, unsigned, symlinks=True)
    (unsigned / "manifest.sig").unlink()
    assert htp("verify", unsigned).returncode == 0, "integrity alone cannot catch a rehashed edit"
    r = htp("verify", pkg, "--key", f"{key}.pub")
    assert r.returncode == 1
    assert "the signature does not match manifest.json: the manifest was changed after it was signed" in r.stderr


def test_verify_with_a_key_names_an_unsigned_package_and_another_signer(pkg, tmp_path):
    mine, theirs = tmp_path / "mine.pem", tmp_path / "theirs.pem"
    assert htp("keygen", mine).returncode == 0 and htp("keygen", theirs).returncode == 0
    r = htp("verify", pkg, "--key", f"{mine}.pub")
    assert r.returncode == 1 and "the package is not signed: no manifest.sig" in r.stderr
    assert htp("sign", pkg, "--key", theirs).returncode == 0
    r = htp("verify", pkg, "--key", f"{mine}.pub")
    assert r.returncode == 1 and "the package was signed by another key" in r.stderr


@pytest.mark.parametrize("flag,where", [("-o", "results"), ("--run-dir", "rd"), ("-o", ".")])
def test_run_refuses_to_write_outputs_into_the_package_outside_logs(pkg, inputs, flag, where):
    # They landed beside the listed files, and every later run refused the package (package.unlisted-file).
    r = htp(*run_args(pkg, inputs, flag, pkg / where))
    assert r.returncode == 2 and f"is inside the package, which holds only the files its manifest lists" in r.stderr
    assert not (pkg / where / "C.npy").exists()
    ok = htp(*run_args(pkg, inputs, "-o", pkg / "logs" / "mine"))  # logs/ is the package's own place for them
    assert ok.returncode == 0, ok.stderr
    assert htp(*run_args(pkg, inputs)).returncode == 0


def test_run_says_which_argument_is_given_as_the_wrong_kind(pkg, inputs):
    r = htp("run", pkg, "-i", f"A={inputs['A']}", "-s", "B=1.0")
    assert r.returncode == 1
    assert "tensor argument 'B' (in f32[128, 64]) is given as a number; give it as an array" in r.stderr, r.stderr
    assert "missing input" not in r.stderr


def test_a_lockfile_that_cannot_be_written_says_why(tmp_path):
    r = htp("resolve", "--target", "pto-a2a3sim", "--uses", "Uses.Dialect(name=tile)", "--lock", tmp_path)
    assert r.returncode != 0 and f"cannot write '{tmp_path}': Is a directory [lock.write]" in r.stderr, r.stderr


@pytest.mark.parametrize("value", ["{bad json", "[1,2"])
def test_an_option_that_starts_as_json_must_be_json(value):
    r = htp("compile", EXAMPLES / "vector_add.py", "--target", "pto-a2a3sim", "--option", f"foo={value}", "-o",
            "/nonexistent/never")
    assert r.returncode == 2 and f"--option expects KEY=JSON, got 'foo={value}'" in r.stderr, r.stderr
