#!/usr/bin/env python3
"""The Python pass bridge: a no-op pattern written in Python against the same pattern in C++ (bench-noop's
bench.never-applies), both rooted at every node of a 100k-node module held resident, run through
Context.run_pass; and a Python pattern rooted at Call only, for the cost per matched node. Prints Google
Benchmark JSON; bench/report.py prints the ratio (target: a no-op Python pass <= 20x a no-op C++ pass).

    PYTHONPATH=build/python /usr/bin/python3 bench/pass/python_pass.py [BUILD_DIR]
"""
import ast
import json
import pathlib
import statistics
import sys

import htp
from htp import _ast_json
from htp.extension import Extension

ext = Extension("bench-python-passes", version="1.0.0")
visits = [0]


@ext.pattern_pass("bench.py-never-applies", roots=[], stage="canonicalize")
def never_applies(node, rw):
    return False


@ext.pattern_pass("bench.py-never-applies-call", roots=["Call"], stage="canonicalize")
def never_applies_to_calls(node, rw):
    visits[0] += 1
    return False


def module_of(statements: int) -> dict:
    """`statements` lines `x = a + b * c` (8 nodes each) and one call per 8 lines."""
    lines = [("x = f(a) + b * c" if i % 8 == 0 else "x = a + b * c") for i in range(statements)]
    tree = ast.parse("\n".join(lines) + "\n")
    return _ast_json.to_json(tree, "bench.py", source="")


def node_count(doc) -> int:
    n = 0
    stack = [doc["root"]]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            n += "_type" in x or "type" in x
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return n


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(htp.__file__).parents[2])
    noop = build / "bench" / "pass" / "plugins" / "htp-bench-noop.so"
    if not noop.exists():
        print(json.dumps({"benchmarks": []}))
        return
    ctx = htp.Context(plugins=[str(noop), sys.modules[__name__]], builtins=False, use_environment=False)
    doc = module_of(100000 // 8)
    benchmarks = []
    for name, pass_id, repeat in (("cpp-never-applies", "bench.never-applies", 30),
                                  ("python-never-applies", "bench.py-never-applies", 5),
                                  ("python-never-applies-call", "bench.py-never-applies-call", 10)):
        visits[0] = 0
        seconds = ctx.run_pass(pass_id, doc, repeat=repeat)["seconds"]
        per_run = statistics.median(seconds[1:] if len(seconds) > 1 else seconds)
        entry = {"name": f"BM_PassBridge/{name}/100k", "run_type": "iteration", "iterations": len(seconds),
                 "real_time": per_run * 1e9, "cpu_time": per_run * 1e9, "time_unit": "ns"}
        if visits[0]:
            entry["calls"] = visits[0] / len(seconds)
            entry["seconds_per_call"] = per_run / entry["calls"]
        benchmarks.append(entry)
    print(json.dumps({"benchmarks": benchmarks}))


if __name__ == "__main__":
    main()
