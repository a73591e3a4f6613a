#!/usr/bin/env python3
"""Validates what the host writes against the JSON Schemas in docs/schemas: the manifest of a package
compiled with the toy extension, and the plugin manifests of the built-in plugins and fixtures.

Usage: validate_schemas.py SOURCE_DIR HTP_HOST TOY_PLUGIN PLUGIN_DIR..."""
import ast
import json
import pathlib
import subprocess
import sys
import tempfile

import jsonschema

src, host, toy = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
plugin_dirs = [pathlib.Path(p) for p in sys.argv[4:]]
sys.path.insert(0, str(src / "host" / "python" / "htp"))
import _ast_json  # noqa: E402

schemas = src / "docs" / "schemas"
manifest_schema = json.loads((schemas / "manifest.schema.json").read_text())
plugin_schema = json.loads((schemas / "plugin-manifest.schema.json").read_text())

program = "import toy\n\n@toy.kernel\ndef k(x):\n    return toy.add(x, 1 + 2)\n"
with tempfile.TemporaryDirectory() as tmp:
    prog = pathlib.Path(tmp) / "prog.json"
    prog.write_text(json.dumps(_ast_json.to_json(ast.parse(program), "prog.py", source=program)))
    out = pathlib.Path(tmp) / "pkg"
    subprocess.run([host, "--plugins", toy, "compile", str(prog), "-t", "toy-sim", "-o", str(out), "--dump-ir=all"],
                   check=True)
    manifest = json.loads((out / "manifest.json").read_text())
    jsonschema.validate(manifest, manifest_schema)
    print(f"ok: {out / 'manifest.json'} is a valid htp.manifest.v1 ({len(manifest['files'])} files)")

count = 0
for d in plugin_dirs:
    for f in sorted(d.rglob("*.plugin.json")):
        jsonschema.validate(json.loads(f.read_text()), plugin_schema)
        count += 1
if count < 6:
    sys.exit(f"expected at least 6 plugin manifests, validated {count}")
print(f"ok: {count} plugin manifests are valid htp.plugin.v1")
