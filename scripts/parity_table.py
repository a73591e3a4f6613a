#!/usr/bin/env python3
"""The parity table of docs/parity.md: program constructs x simulator targets, generated from the tests.

A cell is ✓ only when a test runs that construct on that target and checks its numbers against NumPy:

* every example in examples/ (its ENTRIES, through examples/example_index.py) is one row, its cells the
  targets it lists — each runs in `make test` as example.<name>.<target> against its NumPy reference;
* construct rows come from `PARITY` declarations in the test files listed in TEST_FILES: a module-level
  dict {test function: [(construct, target), ...]}; the generator checks that each named test function
  exists in that file, so a cell cannot outlive its test; and from each example's `PARITY_CONSTRUCTS` (the
  constructs it runs), ✓ on every target its ENTRIES lists.

Every construct in CONSTRUCTS is a row whether or not a test covers it: an uncovered cell is ✗.

    python3 scripts/parity_table.py            # prints the table
    python3 scripts/parity_table.py --write    # rewrites docs/parity.md
    python3 scripts/parity_table.py --check    # exits 1 when docs/parity.md differs (ctest docs.parity)
"""
from __future__ import annotations

import argparse
import ast
import difflib
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
TARGETS = ["pto-a2a3sim", "aie-npu1"]
DOC = ROOT / "docs" / "parity.md"

# Test files whose PARITY declarations name cells (paths from the repository root).
TEST_FILES = [
    "tests/e2e/test_aie_orchestrated.py",
    "tests/e2e/test_llm_decode.py",
    "tests/e2e/test_memory_layouts.py",
    "tests/e2e/test_schedules.py",
    "tests/python/test_dist_layouts.py",
    "tests/python/test_collectives.py",
    "tests/python/test_streamed_kernels.py",
    "tests/python/test_csp_orchestrated.py",
    "tests/python/test_csp_carries.py",
    "tests/python/test_rank3_views.py",
    "tests/plugins/backend-aie/test_aie_e2e.py",
    "tests/python/test_workload_dims.py",
    "tests/python/test_portable_ops.py",
]

# The constructs of the WSP, CSP, tile and layout models, in table order (issue 17's list and more).
CONSTRUCTS = {
    "ragged domain (`Ragged`)": "WSP",
    "CSR selection (`P.sel` over `Sparse`)": "WSP",
    "`P.when` on tensor elements": "WSP",
    "runtime scalar of a workload": "WSP",
    "InOut accumulation over launches": "WSP",
    "`P.seq` step reading what the step before wrote": "WSP",
    "tensor dimension bound at run time": "WSP",
    "view offset read from a tensor (block table)": "WSP",
    "several launches with intermediates": "WSP",
    "grid larger than the device": "WSP",
    "`P.pipe` over channels": "WSP",
    "workload dimension as an expression": "WSP",
    "schedule `dispatch`": "WSP",
    "schedule `tile`": "WSP",
    "schedule `pipeline`": "WSP",
    "schedule `buffer`": "WSP",
    "schedule `timing(batched)`": "WSP",
    "CSP program (processes, channels)": "CSP",
    "CSP replicated process (`replicate`)": "CSP",
    "CSP processes with different trip counts": "CSP",
    "CSP links (`connect`: distribute, join, forward)": "CSP",
    "CSP `Event` (rendezvous)": "CSP",
    "CSP round trip within one iteration": "CSP",
    "CSP process using a tile across the steps of an iteration": "CSP",
    "runtime scalar of a CSP program": "CSP",
    "CSP process storing at an offset known only at run time": "CSP",
    "CSP process sending or receiving twice on one channel per iteration": "CSP",
    "CSP process reading one input through two views per iteration": "CSP",
    "CSP program larger than a core's memory": "CSP",
    "CSP process reading back an `InOut` tensor it stores": "CSP",
    "CSP process storing under an `if`": "CSP",
    "CSP process sending in each branch of an `if`": "CSP",
    "CSP process reading the previous tile under `if i == 0`": "CSP",
    "CSP program with more process replicas than cores": "CSP",
    "CSP process with statements before and after its loop": "CSP",
    "CSP process sending after its loop": "CSP",
    "kernel with three inputs": "tile",
    "kernel entry with three inputs": "tile",
    "kernel entry with runtime scalars": "tile",
    "`transpose`": "tile",
    "column broadcast (`colexpand_*`)": "tile",
    "view dropping a middle dimension": "tile",
    "view of a rank-3 tensor in a kernel (`x[b, 0:32, :]`)": "tile",
    "kernel mixing cube and vector work": "tile",
    "kernel chaining matmuls (`matmul(matmul(a, b), w)`)": "tile",
    "kernel mixing cube and vector work in one branch of an `if`": "tile",
    "kernel replacing a register through a matmul in one branch of an `if`": "tile",
    "kernel chaining matmuls in one branch of an `if`": "tile",
    "matmul of a tile by itself (`matmul(t, t)`)": "tile",
    "kernel reusing a register name for a later matmul's result": "tile",
    "kernel with nested `if`s mixing cube and vector work": "tile",
    "kernel entry mixing cube and vector work": "tile",
    "kernel entry looping over tiles of tensors larger than a core": "tile",
    "kernel entry looping over tiles, mixing cube and vector work": "tile",
    "kernel entry whose loop carries tiles, mixing cube and vector work": "tile",
    "kernel entry with nested loops over tiles and an inner K-loop, larger than a core": "tile",
    "kernel entry whose loop carries a register over tensors larger than a core": "tile",
    "kernel entry with several loops over tensors larger than a core": "tile",
    "kernel entry larger than a core reading the previous or next tile under an if on the loop variable": "tile",
    "kernel launched by a workload whose loop carries tiles, mixing cube and vector work": "tile",
    "layout `dist` facet (sharding over cores)": "layout",
    "mapped kernel launched by a workload": "layout",
    "replicated output of a mapped kernel": "layout",
    "mapped kernel mixing cube and vector work": "layout",
    "mapped kernel with three inputs": "layout",
    "layout `mem` facet (strides, order)": "layout",
    "`Layout.axe` full form with local `m` iters of a row-sharded tensor": "layout",
    "`Layout.axe` full form with local `m` iters of a column-sharded tensor": "layout",
    "tiled local layout (several `m` iters per dim)": "layout",
    "collectives in a kernel (`allreduce`, `allgather`, `reduce_scatter`, `relayout`)": "layout",
}


def _comprehension_vars(expr: ast.AST) -> set[str]:
    return {n.id for c in ast.walk(expr) if isinstance(c, ast.comprehension) for n in ast.walk(c.target)
            if isinstance(n, ast.Name)}


def _assignment(tree: ast.Module, name: str) -> ast.Assign | None:
    """The module-level `name = ...` of `tree`, or None."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node
    return None


def examples_constructs() -> dict[str, list[str]]:
    """Each example's PARITY_CONSTRUCTS (a module-level list of constructs it runs), by module name."""
    out = {}
    for path in sorted((ROOT / "examples").glob("*.py")):
        node = _assignment(ast.parse(path.read_text(), filename=str(path)), "PARITY_CONSTRUCTS")
        if node is None:
            continue
        names = ast.literal_eval(node.value)
        for c in names:
            if c not in CONSTRUCTS:
                raise SystemExit(f"{path}:{node.lineno}: PARITY_CONSTRUCTS names an unknown construct '{c}'")
        out[path.stem] = names
    return out


def parity_of(path: pathlib.Path) -> dict[str, list[tuple[str, str]]]:
    """The file's PARITY dict, checked: every test named is a function of the file, every construct known."""
    tree = ast.parse(path.read_text(), filename=str(path))
    functions = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    node = _assignment(tree, "PARITY")
    if node is None:
        raise SystemExit(f"{path}: no PARITY dict")
    # Literals and comprehensions over literals only: no names, no calls.
    for n in ast.walk(node.value):
        if isinstance(n, ast.Call) or (isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)
                                       and n.id not in _comprehension_vars(node.value)):
            raise SystemExit(f"{path}:{n.lineno}: PARITY holds literals and comprehensions over them only")
    value = eval(compile(ast.Expression(node.value), str(path), "eval"), {"__builtins__": {}}, {})
    for test, cells in value.items():
        if test not in functions:
            raise SystemExit(f"{path}:{node.lineno}: PARITY names '{test}', which is no test function of the file")
        for construct, target in cells:
            if construct not in CONSTRUCTS:
                raise SystemExit(f"{path}:{node.lineno}: PARITY names an unknown construct '{construct}' "
                                 f"(scripts/parity_table.py CONSTRUCTS)")
            if target not in TARGETS:
                raise SystemExit(f"{path}:{node.lineno}: PARITY names an unknown target '{target}'")
    return {t: [tuple(c) for c in cells] for t, cells in value.items()}


def table() -> str:
    sys.path.insert(0, str(ROOT / "examples"))
    import example_index  # noqa: E402  (examples/example_index.py: every example's ENTRIES, parsed with ast)

    cells: dict[tuple[str, str], list[str]] = {}
    constructs_of = examples_constructs()
    for module, target, _entry in example_index.runs():   # an example's constructs, on every target it runs on
        for construct in constructs_of.get(module, []):
            cells.setdefault((construct, target), []).append(f"example.{module}.{target}")
    for rel in TEST_FILES:
        path = ROOT / rel
        for test, pairs in parity_of(path).items():
            for construct, target in pairs:
                cells.setdefault((construct, target), []).append(f"{path.stem}::{test}")
    lines = ["# Parity: constructs x simulator targets", "",
             "Generated by `scripts/parity_table.py --write` from the tests; `ctest -R docs.parity` fails when this",
             "file differs from what the tests say. ✓: a test runs the construct on that target and checks the numbers",
             "against NumPy (the tests named under the table); ✗: no test does (the backend rejects it or lowers",
             "it untested). Do not edit by hand.", "",
             "## Constructs", "",
             "| model | construct | " + " | ".join(TARGETS) + " |",
             "|---|---|" + "---|" * len(TARGETS)]
    for construct, model in CONSTRUCTS.items():
        marks = ["✓" if (construct, t) in cells else "✗" for t in TARGETS]
        lines.append(f"| {model} | {construct} | " + " | ".join(marks) + " |")
    lines += ["", "## Examples (each runs as `example.<name>.<target>` in `make test`)", "",
              "| example | " + " | ".join(TARGETS) + " |", "|---|" + "---|" * len(TARGETS)]
    by_example: dict[str, set[str]] = {}
    for module, target, _entry in example_index.runs():
        by_example.setdefault(module, set()).add(target)
    for module in sorted(by_example):
        lines.append(f"| `{module}.py` | " + " | ".join("✓" if t in by_example[module] else "✗" for t in TARGETS) + " |")
    lines += ["", "## The tests behind each ✓", ""]
    for construct in CONSTRUCTS:
        for t in TARGETS:
            if (construct, t) in cells:
                lines.append(f"- {construct}, {t}: " + ", ".join(f"`{x}`" for x in sorted(cells[(construct, t)])))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = table()
    if args.write:
        DOC.write_text(text)
    elif args.check:
        have = DOC.read_text() if DOC.exists() else ""
        if have != text:
            sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), text.splitlines(True), str(DOC), "generated"))
            print(f"\n{DOC} is out of date: run python3 scripts/parity_table.py --write", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
