"""Which example runs on which target with which entry, read from each example's ``ENTRIES`` dict.

Every example in this directory declares ``ENTRIES = {"<target>": <entry function>, ...}`` once; the example
tests (tests/examples), the concurrency stress test and the compile-time benchmark all take their
(example, target, entry) list from here. The file is parsed with ``ast``, so listing needs neither htp nor
NumPy (CMake runs it at configure time).

    python examples/example_index.py [--format cmake|text]
"""
from __future__ import annotations

import argparse
import ast
import pathlib
import sys

EXAMPLES_DIR = pathlib.Path(__file__).resolve().parent


def _entries_of(path: pathlib.Path) -> dict[str, str] | None:
    """The example's ``ENTRIES`` as target -> entry function name, or None when it declares none."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ENTRIES" for t in node.targets):
            if not isinstance(node.value, ast.Dict):
                raise SystemExit(f"{path}:{node.lineno}: ENTRIES must be a dict literal of target -> entry function")
            entries = {}
            for key, value in zip(node.value.keys, node.value.values):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Name)):
                    raise SystemExit(f"{path}:{node.lineno}: ENTRIES maps a target string to an entry function name")
                entries[key.value] = value.id
            return entries
    return None


def runs(examples_dir: pathlib.Path = EXAMPLES_DIR) -> list[tuple[str, str, str]]:
    """(example module, target, entry function) for every example and target, in file then ENTRIES order."""
    out = []
    for path in sorted(examples_dir.glob("*.py")):
        entries = _entries_of(path)
        out.extend((path.stem, target, entry) for target, entry in (entries or {}).items())
    return out


def context_for(module, shared=None):
    """The htp.Context to compile an example with: an example that defines an ``htp.extension.Extension``
    (a pass or intrinsic set written in Python) is loaded as its own plugin, in a Context of its own; any
    other example uses ``shared`` (created when None)."""
    import htp

    if _has_extension(module):
        return htp.Context(plugins=[module])
    return shared if shared is not None else htp.Context()


def loaded_runs(examples_dir: pathlib.Path = EXAMPLES_DIR):
    """(example module name, target, entry function, the module, the htp.Context to compile it with) for every
    run of runs(), the examples imported (examples_dir on sys.path) and one Context shared by those that
    need no plugin of their own (context_for)."""
    import importlib

    if str(examples_dir) not in sys.path:
        sys.path.insert(0, str(examples_dir))
    import htp

    shared = htp.Context()
    for module_name, target, entry in runs(examples_dir):
        module = importlib.import_module(module_name)
        yield module_name, target, getattr(module, entry), module, context_for(module, shared)


def _has_extension(module) -> bool:
    from htp.extension import Extension

    return any(isinstance(v, Extension) for v in vars(module).values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", choices=["cmake", "text"], default="text",
                    help="cmake: a ;-list of example:target:entry; text: one run per line")
    args = ap.parse_args(argv)
    items = [f"{e}:{t}:{f}" for e, t, f in runs()]
    print(";".join(items) if args.format == "cmake" else "\n".join(items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
