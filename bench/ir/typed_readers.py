#!/usr/bin/env python3
"""The SDK's typed readers against parsing the JSON of the same documents (issue 18: reading tile.kernels of
the largest example costs no more than parsing it). Compiles every example entry of examples/example_index.py
with the module dumped after tile.lower, keeps the largest document of each shared attribute (tile.kernels,
wsp.task_graph, csp.graph, layout.signatures), and runs build/bin/htp_irbench_typed_readers on them. Prints
Google Benchmark JSON, so bench/report.py tabulates it.

    PYTHONPATH=build/python /usr/bin/python3 bench/ir/typed_readers.py
"""
import importlib
import json
import pathlib
import subprocess
import sys
import tempfile

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
ATTRIBUTES = ("tile.kernels", "wsp.task_graph", "csp.graph", "layout.signatures")


def main():
    sys.path.insert(0, str(EXAMPLES))
    import example_index
    import htp

    binary = pathlib.Path(htp.__file__).resolve().parents[2] / "bin" / "htp_irbench_typed_readers"
    if not binary.exists():
        sys.exit(f"{binary} is not built (target htp_irbench_typed_readers)")
    largest = {}  # attribute -> (size, text, example)
    ctx = htp.Context()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for i, (module_name, target, entry) in enumerate(example_index.runs(EXAMPLES)):
            module = importlib.import_module(module_name)
            out = tmp / f"pkg{i}"
            example_index.context_for(module, ctx).compile(getattr(module, entry), target=target, out=out,
                                                           dump_ir="tile.lower")
            (dump,) = list((out / "ir").glob("*_tile.lower.ast.json"))
            attrs = json.loads(dump.read_text())["attrs"]
            for a in ATTRIBUTES:
                if a in attrs:
                    text = json.dumps(attrs[a])
                    if len(text) > largest.get(a, (0,))[0]:
                        largest[a] = (len(text), text, f"{module_name}/{target}")
        docs = tmp / "docs"
        docs.mkdir()
        for a, (_, text, _) in largest.items():
            (docs / f"{a}.json").write_text(text)
        p = subprocess.run([str(binary), str(docs), "--benchmark_format=json"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(p.stderr)
        result = json.loads(p.stdout)
    for b in result["benchmarks"]:
        attr = b["name"].split("/", 1)[1]
        if attr in largest:
            b["label"] = f"{b.get('label', '')}; largest: {largest[attr][2]}"
    print(json.dumps({"benchmarks": result["benchmarks"]}))


if __name__ == "__main__":
    main()
