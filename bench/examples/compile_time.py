#!/usr/bin/env python3
"""Host-side compile time per example: capture (Python AST of the program) + resolve + passes + package,
through htp.Context().compile with a warm Context, median of REPEAT compiles. Prints Google Benchmark JSON
({"benchmarks": [...]}) so bench/report.py tabulates it with the C++ benchmarks.

    PYTHONPATH=build/python /usr/bin/python3 bench/examples/compile_time.py [--repeat N]
"""
import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    sys.path.insert(0, str(EXAMPLES))
    import example_index  # every example's ENTRIES: (example, target, entry)
    from htp.capture import capture

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for module_name, target, fn, _, example_ctx in example_index.loaded_runs(EXAMPLES):
            times, capture_times = [], []
            for i in range(args.repeat + 1):
                t0 = time.perf_counter()
                example_ctx.compile(fn, target=target, out=pathlib.Path(tmp) / f"{module_name}-{target}-{i}")
                t1 = time.perf_counter()
                capture(fn)
                t2 = time.perf_counter()
                if i:  # the first compile warms caches (imports, file system)
                    times.append((t1 - t0) * 1e3)
                    capture_times.append((t2 - t1) * 1e3)
            out.append({"name": f"BM_ExampleCompile/{module_name}/{target}", "run_type": "iteration",
                        "iterations": args.repeat, "real_time": statistics.median(times),
                        "cpu_time": statistics.median(times), "time_unit": "ms",
                        "label": f"of which capture {statistics.median(capture_times):.1f} ms"})
    print(json.dumps({"benchmarks": out}))


if __name__ == "__main__":
    main()
