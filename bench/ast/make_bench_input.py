"""Writes the htp.ast.v1 document of a standard-library module, the input of the AST benchmarks.

Usage: make_bench_input.py <module name> <output .ast.json>
Uses host/python/htp/_ast_json.py directly (loaded by path), so it needs no built extension.
"""
import ast
import importlib.util
import pathlib
import sys


def main() -> None:
    module, out = sys.argv[1], pathlib.Path(sys.argv[2])
    here = pathlib.Path(__file__).resolve()
    codec_path = here.parents[2] / "host" / "python" / "htp" / "_ast_json.py"
    spec = importlib.util.spec_from_file_location("_ast_json", codec_path)
    codec = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(codec)

    path = importlib.util.find_spec(module).origin
    source = pathlib.Path(path).read_text(encoding="utf-8")
    doc = codec.to_json(ast.parse(source, path, type_comments=True), path, source=source)
    text = codec.dumps(doc)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
