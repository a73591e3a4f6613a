#!/usr/bin/env bash
# Installs HTP from BUILD into WORK/prefix, builds the plugin in SRC against it with nothing but
# find_package(HTP), and loads it with the installed htp-host beside the built-in plugins.
set -euo pipefail
build=$1 work=$2 src=$3
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
host="$work/prefix/bin/htp-host"
plugin="$work/build/plugins/htp-hello.so"
test -f "$work/build/plugins/htp-hello.plugin.json" || { echo "FAIL: no manifest generated"; exit 1; }
"$host" plugins verify "$plugin"
list=$("$host" --plugins "$work/prefix/lib/htp/plugins" --plugins "$work/build/plugins" plugins list --json)
echo "$list" | /usr/bin/python3 -c '
import json, sys
names = sorted(p["name"] for p in json.load(sys.stdin)["plugins"])
expected = sorted(["hello", "dialect-tile", "dialect-wsp", "dialect-csp", "layout-axe", "backend-pto", "backend-aie"])
assert names == expected, names
print("ok: the installed htp-host loads", len(names), "plugins:", ", ".join(names))
'
"$host" --plugins "$plugin" plugins inspect hello | grep -q "pass hello.greet 0.1.0" || { echo "FAIL: inspect"; exit 1; }
nm -D --defined-only "$plugin" | awk '{print $NF}' | grep -v '^htp_' && { echo "FAIL: non-htp exports"; exit 1; }
echo "ok: out-of-tree plugin built against the installed SDK"
# The installed Python package imports and loads the installed plugins.
PYTHONPATH="$work/prefix/lib/python3/dist-packages" /usr/bin/python3 -c '
import htp, sys
ctx = htp.Context()
names = sorted(p["name"] for p in ctx.plugins())
assert len(names) == 6, names
print("ok: installed htp package imports from", htp.__file__, "and loads", len(names), "plugins")
'
