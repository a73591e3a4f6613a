#!/usr/bin/env python3
"""Run-time-data fuzzer: compiles the programs whose runs take runtime data once per simulator target, then
runs each package many times through `htp-host run` with mutated data — CSR row pointers and indices, ragged
lengths and block starts (integer tensors), runtime scalars (nan, inf, huge, negative).

The oracle, for every run: exit 0, or exit 1 with an error; never a signal, a timeout or a Python traceback.
A run with the original data must match the program's NumPy reference.

    runtime_fuzz.py --host build/bin/htp-host --runs 12 --seed 1

Subjects: the examples with integer runtime data (moe.py: CSR; flash_decode.py: ragged lengths; on the
targets their ENTRIES list), and an entry kernel with a runtime scalar on pto-a2a3sim and aie-npu1."""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCALAR_PROGRAM = ROOT / "tests" / "plugins" / "backend-aie" / "programs" / "scale_scalar.py"
TIME_LIMIT_S = 120


def load_module(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Subject:
    """A program, a target, its inputs (arrays and scalars) and its reference."""

    def __init__(self, name, path, target, entry, inputs, reference, outputs):
        self.name, self.path, self.target, self.entry = name, path, target, entry
        self.inputs, self.reference, self.outputs = inputs, reference, outputs


def subjects(rng) -> list[Subject]:
    out = []
    for stem in ("moe", "flash_decode"):
        m = load_module(EXAMPLES / f"{stem}.py")
        for target in m.ENTRIES:
            inputs = m.make_inputs(np.random.default_rng(0))
            out.append(Subject(stem, EXAMPLES / f"{stem}.py", target, m.ENTRIES[target].fn.__name__, inputs,
                               m.reference, None))
    x = rng_array(rng, (32, 32))

    def scale_reference(X, s):
        return {"Y": X * np.float32(s)}

    for target in ("pto-a2a3sim", "aie-npu1"):
        out.append(Subject("scale_scalar", SCALAR_PROGRAM, target, "scale", {"X": x, "s": 2.5}, scale_reference,
                           ["Y"]))
    return out


def rng_array(rng, shape):
    return np.random.default_rng(rng.randrange(1 << 30)).standard_normal(shape).astype(np.float32)


def mutate(rng: random.Random, inputs: dict) -> tuple[dict, str]:
    """A copy of `inputs` with one runtime datum changed, and what changed."""
    data = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    ints = [k for k, v in data.items() if isinstance(v, np.ndarray) and v.dtype.kind in "iu"]
    scalars = [k for k, v in data.items() if isinstance(v, (int, float))]
    name = rng.choice(ints + scalars)
    v = data[name]
    if name in scalars:
        new = rng.choice([math.nan, math.inf, -math.inf, 0.0, -1.0, 1e30, -1e30, 2**31, -(2**31)])
        data[name] = new
        return data, f"{name} = {new}"
    kind = rng.randrange(5)
    if kind == 0:
        i = rng.randrange(v.size)
        new = rng.choice([-1, -5, -(2**31), 2**31 - 1, int(v.size) * 2, int(v.max()) + 1])
        v.flat[i] = new
        return data, f"{name}[{i}] = {new}"
    if kind == 1:
        data[name] = v[::-1].copy()
        return data, f"{name} reversed"
    if kind == 2:
        data[name] = np.zeros_like(v)
        return data, f"{name} zeroed"
    if kind == 3:
        data[name] = np.array([rng.randrange(-5, 100) for _ in range(v.size)], dtype=v.dtype).reshape(v.shape)
        return data, f"{name} random in [-5, 100)"
    data[name] = v + rng.choice([-1, 1])
    return data, f"{name} shifted by one"


def run(host, pkg, data, work: pathlib.Path, cache):
    args = [host, "run", str(pkg), "--cache", str(cache), "-o", str(work / "out")]
    for k, v in data.items():
        if isinstance(v, np.ndarray):
            path = work / f"{k}.npy"
            np.save(path, v)
            args += ["-i", f"{k}={path}"]
        else:
            args += ["--scalar", f"{k}={v}"]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=TIME_LIMIT_S)
    except subprocess.TimeoutExpired:
        return None, f"no answer within {TIME_LIMIT_S} s", time.perf_counter() - t0
    return r, "", time.perf_counter() - t0


def violation(r, detail) -> str | None:
    if r is None:
        return "timeout: " + detail
    if r.returncode < 0:
        return f"signal {-r.returncode}: {r.stderr[-1500:]}"
    if "Traceback (most recent call last)" in r.stderr:
        return "traceback: " + r.stderr[-1500:]
    if r.returncode not in (0, 1):
        return f"exit {r.returncode}: {r.stderr[-1500:]}"
    if r.returncode == 1 and "error:" not in r.stderr:
        return "exit 1 without an error: " + r.stderr[-1500:]
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=12, help="mutated runs per subject")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    failures, counts = [], {"ok": 0, "diagnosed": 0}
    start = time.perf_counter()
    sys.path.insert(0, str(EXAMPLES))
    with tempfile.TemporaryDirectory(prefix="htp-runtime-fuzz-") as tmp:
        tmp = pathlib.Path(tmp)
        cache = tmp / "cache"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]))
        for s in subjects(rng):
            label = f"{s.name} [{s.target}]"
            pkg = tmp / f"{s.name}-{s.target}"
            c = subprocess.run([args.host, "compile", str(s.path), "--target", s.target, "-o", str(pkg)],
                               capture_output=True, text=True, env=env, timeout=TIME_LIMIT_S)
            if c.returncode != 0:
                failures.append(f"{label}: does not compile: {c.stderr[-1500:]}")
                continue
            work = tmp / "work"
            work.mkdir(exist_ok=True)
            r, detail, _ = run(args.host, pkg, s.inputs, work, cache)
            bad = violation(r, detail)
            if bad or r.returncode != 0:
                failures.append(f"{label}: the original data does not run: {bad or r.stderr[-1500:]}")
                continue
            want = s.reference(**{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.inputs.items()})
            for name, expected in want.items():
                got = np.load(work / "out" / f"{name}.npy")
                if not np.allclose(got, expected, rtol=1e-3, atol=1e-3):
                    failures.append(f"{label}: output {name} differs from NumPy with the original data")
            counts["ok"] += 1
            for i in range(args.runs):
                data, what = mutate(rng, s.inputs)
                r, detail, seconds = run(args.host, pkg, data, work, cache)
                bad = violation(r, detail)
                if bad:
                    failures.append(f"{label} run {i} ({what}): {bad}")
                    print(f"FAIL {label} ({what}): {bad}", flush=True)
                else:
                    counts["ok" if r.returncode == 0 else "diagnosed"] += 1
    print(f"runtime fuzz (seed {args.seed}): {counts['ok']} runs ok, {counts['diagnosed']} diagnosed, "
          f"{len(failures)} violations in {time.perf_counter() - start:.0f} s")
    for f in failures:
        print("  violation:", f)
    print(f"{counts['ok'] + counts['diagnosed']} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
