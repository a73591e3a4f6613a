#!/usr/bin/env python3
"""Runs every HTP benchmark binary and prints the figures against the targets in bench/targets.json.

A target with "match" gives one row per benchmark it matches (a benchmark may match several: time, size,
rate); a target with "ratio": [NUMERATOR, DENOMINATOR] (two name regexes) gives one row with the ratio of
their figures, e.g. the growth of the resolver from 10k to 100k components.

Usage: report.py BUILD_DIR [--filter REGEX] [--json OUT]
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys

# Python scripts under bench/ that print Google Benchmark JSON.
PYTHON_BENCHMARKS = ["examples/compile_time.py", "examples/run_report.py", "examples/estimates.py", "ir/typed_readers.py",
                     "pto-sim/numpy_tile_ops.py", "pass/python_pass.py", "serving/llm_decode.py", "build/cold_build.py"]
# Scripts too slow to run for a filter that cannot match what they print (the cold build takes minutes).
PYTHON_BENCHMARK_NAMES = {"build/cold_build.py": ["BM_ColdBuild/default", "BM_ColdMakeTest/default"]}

UNIT_SCALE = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Counters printed in a larger unit than they are reported in (bytes, bytes per second).
COUNTER_SCALE = {"kB": 1e3, "MB": 1e6, "MB/s": 1e6}


FAILED = []  # benchmarks that did not run: reported after the table, and the exit status is 1


def benchmark_json(cmd, env=None):
    """The "benchmarks" a Google-Benchmark-JSON producer prints, or [] after recording why it failed."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        tail = " | ".join(p.stderr.strip().splitlines()[-3:])
        FAILED.append(f"{pathlib.Path(cmd[-1] if cmd[0].endswith('python3') else cmd[0]).name} "
                      f"exited with {p.returncode}: {tail}")
        return []
    if not p.stdout.strip():  # the filter matched nothing in this binary
        return []
    return json.loads(p.stdout)["benchmarks"]


def run(binary, filt):
    cmd = [str(binary), "--benchmark_format=json"]
    if filt:
        cmd.append(f"--benchmark_filter={filt}")
    return benchmark_json(cmd)


def run_python_benchmarks(build, filt):
    """The PYTHON_BENCHMARKS (Google Benchmark JSON on stdout), e.g. compile time per example."""
    if not (build / "python" / "htp").is_dir():
        return []
    env = dict(os.environ, PYTHONPATH=str(build / "python"), PYTHONDONTWRITEBYTECODE="1")
    found = []
    for rel in PYTHON_BENCHMARKS:
        names = PYTHON_BENCHMARK_NAMES.get(rel)
        if filt and names and not any(re.search(filt, n) for n in names):
            continue
        script = pathlib.Path(__file__).parent / rel
        found.extend(b for b in benchmark_json(["/usr/bin/python3", str(script)], env=env)
                     if not filt or re.search(filt, b["name"]))
    return found


def value_of(bench, metric, unit):
    if metric == "time":
        seconds = bench["real_time"] * UNIT_SCALE[bench["time_unit"]]
        return seconds / UNIT_SCALE[unit]
    value = bench.get(metric)
    if value is not None and metric.startswith("seconds_per_"):
        return value / UNIT_SCALE[unit]
    if value is not None and unit in COUNTER_SCALE:
        return value / COUNTER_SCALE[unit]
    return value


def judge(target, val, unit):
    """The target's text and the verdict on `val`: "max" is an upper bound, "min" a lower one (OVER / UNDER)."""
    lo, hi = (target or {}).get("min"), (target or {}).get("max")
    text = (f"{lo:g}..{hi:g} {unit}" if lo is not None and hi is not None else f"<= {hi:g} {unit}" if hi is not None
            else f">= {lo:g} {unit}" if lo is not None else "")
    if val is None or not text:
        return text, ""
    return text, "OVER" if hi is not None and val > hi else "UNDER" if lo is not None and val < lo else "ok"


def ratio_rows(targets, results):
    """One row per "ratio" target whose two benchmarks both ran: numerator figure / denominator figure."""
    rows = []
    for t in targets:
        if "ratio" not in t:
            continue
        num_re, den_re = t["ratio"]
        metric = t.get("metric", "time")
        num = next((b for b in results if re.search(num_re, b["name"])), None)
        den = next((b for b in results if re.search(den_re, b["name"])), None)
        if num is None or den is None:
            continue
        a, b = value_of(num, metric, "s"), value_of(den, metric, "s")
        val = a / b if a is not None and b else None
        text, verdict = judge(t, val, t.get("unit", "x"))
        rows.append((t["name"], f"{num['name']} / {den['name']}", val, t.get("unit", "x"), text, verdict, ""))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--filter", default="")
    ap.add_argument("--json")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    targets = json.loads((pathlib.Path(__file__).parent / "targets.json").read_text())["targets"]
    binaries = sorted((build / "bin").glob("htp_bench_*"))
    if not binaries:
        sys.exit(f"no benchmark binaries under {build / 'bin'}")
    results = []
    for b in binaries:
        results.extend(run(b, args.filter))
    results.extend(run_python_benchmarks(build, args.filter))
    rows = []
    for bench in results:
        if bench.get("run_type") == "aggregate":
            continue
        matched = [t for t in targets if "match" in t and re.search(t["match"], bench["name"])] or [None]
        for target in matched:
            unit = target["unit"] if target else bench["time_unit"]
            metric = target["metric"] if target else "time"
            val = value_of(bench, metric, unit)
            text, verdict = judge(target, val, unit)
            rows.append((target["name"] if target else bench["name"], bench["name"], val, unit, text, verdict,
                         bench.get("label", "")))
    rows.extend(ratio_rows(targets, [b for b in results if b.get("run_type") != "aggregate"]))
    if not rows:
        sys.exit("no benchmark matched" + "".join(f"\n  {f}" for f in FAILED))
    w = max(len(r[0]) for r in rows)
    print(f"{'figure':<{w}}  {'measured':>12}  {'target':>10}  verdict  benchmark")
    for name, bname, val, unit, tgt, verdict, label in rows:
        meas = f"{val:.4g} {unit}" if isinstance(val, (int, float)) else "-"
        print(f"{name:<{w}}  {meas:>12}  {tgt:>10}  {verdict:<7}  {bname} {label}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))
    for f in FAILED:
        print(f"did not run: {f}", file=sys.stderr)
    if FAILED:
        sys.exit(1)


if __name__ == "__main__":
    main()
