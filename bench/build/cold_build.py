#!/usr/bin/env python3
"""The cold build and the cold `make test` of the default preset, as a fresh clone on this machine pays
them: the repository's HEAD cloned into a temporary directory, configured and built with the `default`
preset against an empty ccache directory (so nothing is reused), then the whole suite run with ctest (what
`make test` runs after the build). Prints Google Benchmark JSON for bench/report.py: BM_ColdBuild/default
(wall time; counters: build steps, compiler CPU seconds summed from .ninja_log) and BM_ColdMakeTest/default
(configure + build + ctest, wall time; counters: tests run, tests failed). Takes about 8 minutes on 2 cores;
run it on an idle machine.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def ninja_log(build: pathlib.Path):
    """(steps, compiler CPU seconds) of the build recorded in .ninja_log (last entry per output)."""
    spans = {}
    for line in (build / ".ninja_log").read_text().splitlines()[1:]:
        start, end, _, output, _ = line.split("\t")
        spans[output] = int(end) - int(start)
    return len(spans), sum(spans.values()) / 1e3


def main():
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="htp-cold-") as tmp:
        src, cache = pathlib.Path(tmp) / "src", pathlib.Path(tmp) / "ccache"
        cache.mkdir()
        subprocess.run(["git", "clone", "-q", str(ROOT), str(src)], check=True)
        env = dict(os.environ, CCACHE_DIR=str(cache))
        run = lambda *cmd: subprocess.run(list(cmd), cwd=src, env=env, capture_output=True, text=True)
        t0 = time.perf_counter()
        for cmd in (["cmake", "--preset", "default"], ["cmake", "--build", "--preset", "default"]):
            p = run(*cmd)
            if p.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed in the fresh clone:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
        built = time.perf_counter() - t0
        steps, cpu = ninja_log(src / "build")
        p = run("ctest", "--preset", "default")
        total = time.perf_counter() - t0
        m = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", p.stdout)
        tests, failed = (int(m.group(3)), int(m.group(2))) if m else (0, -1)
    label = f"fresh clone of {head}, empty ccache"
    print(json.dumps({"benchmarks": [
        {"name": "BM_ColdBuild/default", "run_type": "iteration", "iterations": 1, "real_time": built,
         "cpu_time": cpu, "time_unit": "s", "steps": steps, "compiler_cpu_seconds": cpu, "label": label},
        {"name": "BM_ColdMakeTest/default", "run_type": "iteration", "iterations": 1, "real_time": total,
         "cpu_time": 0, "time_unit": "s", "tests": tests, "tests_failed": failed,
         "label": f"{label}; {tests} tests, {failed} failed"},
    ]}))


if __name__ == "__main__":
    main()
