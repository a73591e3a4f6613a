#!/usr/bin/env bash
# `make demo`: compile examples/flash_decode.py (WSP workload, a Ragged axis whose extents are only known
# at run time, P.when tiers, split-KV merging) for pto-a2a3sim, run it on the simulator, check it against
# NumPy, and show the package: where it is, its files, the plan, and where the run's trace is.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
host="$build/bin/htp-host"
out="$build/demo/flash_decode-pto-a2a3sim"
export PYTHONPATH="$build/python:$root/examples"
export HTP_CACHE_DIR="${HTP_CACHE_DIR:-$build/demo/cache}"

echo "== htp-host $("$host" --version | cut -d' ' -f2-), plugins:"
"$host" plugins list | sed 's/^/   /'
echo
echo "== examples/flash_decode.py -> pto-a2a3sim: compile, run on the simulator, check against NumPy"
/usr/bin/python3 "$root/examples/flash_decode.py" --target pto-a2a3sim --out "$out"
echo
echo "== the plan (htp-host inspect)"
"$host" inspect "$out" | sed -n '1,/entrypoints/p' | grep -v entrypoints | sed 's/^/   /'
echo
echo "== htp-host verify: manifest, file hashes and plugin set"
"$host" verify "$out"
echo
echo "demo ok: package $out"
