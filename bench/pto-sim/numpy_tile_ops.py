#!/usr/bin/env python3
"""NumPy on the shapes of bench/pto-sim/tile_ops_bench.cpp (the simulated PTO tile instructions): matmul
32x128 @ 128x32 f32, and add, exp, row sum and row-broadcast subtract on 32x128 f32, each the median of
several timeit rounds. Prints Google Benchmark JSON; bench/report.py divides the simulator's time by these.

    /usr/bin/python3 bench/pto-sim/numpy_tile_ops.py
"""
import json
import statistics
import timeit

import numpy as np


def main():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (32, 128)).astype(np.float32)
    b = rng.uniform(-1, 1, (128, 32)).astype(np.float32)
    x = rng.uniform(-1, 1, (32, 128)).astype(np.float32)
    y = rng.uniform(-1, 1, (32, 128)).astype(np.float32)
    s = rng.uniform(-1, 1, (32, 1)).astype(np.float32)
    out = np.empty_like(x)
    ops = {
        "matmul_f32_32x128x32": lambda: np.matmul(a, b),
        "add_f32_32x128": lambda: np.add(x, y, out=out),
        "exp_f32_32x128": lambda: np.exp(x, out=out),
        "rowsum_f32_32x128": lambda: x.sum(axis=1, keepdims=True),
        "rowexpand_sub_f32_32x128": lambda: np.subtract(x, s, out=out),
    }
    benchmarks = []
    for name, fn in ops.items():
        timer = timeit.Timer(fn)
        number, _ = timer.autorange()
        per_call = statistics.median(t / number for t in timer.repeat(repeat=5, number=number))
        benchmarks.append({"name": f"BM_NumpyTileOp/{name}", "run_type": "iteration", "iterations": number,
                           "real_time": per_call * 1e9, "cpu_time": per_call * 1e9, "time_unit": "ns",
                           "label": f"numpy {np.__version__}"})
    print(json.dumps({"benchmarks": benchmarks}))


if __name__ == "__main__":
    main()
