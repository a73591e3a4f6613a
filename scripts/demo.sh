#!/usr/bin/env bash
# The demo: shows the plugin set HTP loads and what each plugin registers.
set -euo pipefail
build=${1:-build}
host="$build/bin/htp-host"
echo "== htp-host $("$host" --version | cut -d' ' -f2-)"
echo "== Built-in plugins ($build/lib/htp/plugins)"
"$host" plugins list
for name in $("$host" plugins list --json | /usr/bin/python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["plugins"]))'); do
  echo "== $name"
  "$host" plugins inspect "$name" | sed 's/^/   /'
done
