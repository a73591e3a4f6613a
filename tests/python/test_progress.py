"""Progress lines of long work: a cold kernel build draws `htp: building kernels N/M (T s)` on a terminal's
stderr, and nothing at all when stderr is a pipe."""
import os
import pty
import subprocess
import sys

import numpy as np
import pytest

import htp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import vector_add  # noqa: E402


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    out = tmp_path_factory.mktemp("progress")
    ctx = htp.Context()
    inputs = vector_add.make_inputs(np.random.default_rng(0))
    for name, a in inputs.items():
        np.save(out / f"{name}.npy", a)
    return {t: ctx.compile(vector_add.vector_add, target=t, out=out / t).path for t in ("pto-a2a3sim", "aie-npu1")}, out


def run(pkg, out, cache, stderr_fd=None):
    cmd = [os.environ["HTP_HOST_EXE"], "run", str(pkg), "-i", f"A={out / 'A.npy'}", "-i", f"B={out / 'B.npy'}",
           "--cache", str(cache), "-o", str(cache / "outputs")]
    env = {k: v for k, v in os.environ.items() if k != "HTP_PROGRESS"}
    if stderr_fd is None:
        return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=stderr_fd, env=env, check=False)


def read_all(fd) -> str:
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child side closed
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize("target,line", [("pto-a2a3sim", "htp: building kernels "),
                                         ("aie-npu1", "htp: building aie-sim kernels")])
def test_cold_build_draws_a_progress_line_on_a_terminal(packages, tmp_path, target, line):
    pkgs, out = packages
    leader, follower = pty.openpty()
    try:
        r = run(pkgs[target], out, tmp_path / "cache", stderr_fd=follower)
        os.close(follower)
        follower = None
        seen = read_all(leader)
    finally:
        os.close(leader)
        if follower is not None:
            os.close(follower)
    assert r.returncode == 0, seen
    assert line in seen, repr(seen)
    assert "\r\x1b[K" in seen, "the line is redrawn in place and cleared at the end"


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_no_progress_line_when_stderr_is_not_a_terminal(packages, tmp_path, target):
    pkgs, out = packages
    r = run(pkgs[target], out, tmp_path / "cache")
    assert r.returncode == 0, r.stderr
    assert "building" not in r.stderr and "\x1b[" not in r.stderr, r.stderr
