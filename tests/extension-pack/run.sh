#!/usr/bin/env bash
# The extension pack end to end, as a third party would use it:
#   1. install HTP from BUILD into WORK/prefix;
#   2. build examples/extension-pack against that prefix with nothing but find_package(HTP);
#   3. load it beside the built-in plugins, compile program.py (and workload.py, a WSP task graph) for
#      cpu-ref and pto-a2a3sim with the installed htp-host, check that bad programs are diagnosed, run
#      every package (htp.bind(pkg).run from the installed Python package) and compare every output
#      with NumPy (check_pack.py).
set -euo pipefail
build=$1 work=$2 pack=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$pack" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
host="$work/prefix/bin/htp-host"
builtin="$work/prefix/lib/htp/plugins"
plugins="$work/build/plugins"
"$host" plugins verify "$plugins/htp-ext-pack.so"
"$host" --plugins "$plugins/htp-ext-pack.so" plugins inspect ext-pack > "$work/inspect.txt"
for kind in "dialect ext" "dialect place" "intrinsic-set ext.intrinsics" "layout place.layout" \
            "backend cpu-ref.backend" "pipeline cpu-ref.pipeline" "binding cpu-ref.binding" "pass cpu-ref.emit"; do
  grep -q "$kind" "$work/inspect.txt" || { echo "FAIL: plugins inspect does not list '$kind'"; cat "$work/inspect.txt"; exit 1; }
done
echo "ok: ext-pack built out of tree against $work/prefix; every component kind registered"
for target in cpu-ref pto-a2a3sim; do
  "$host" --plugins "$builtin" --plugins "$plugins" compile "$pack/program.py" --target "$target" \
    -o "$work/out/$target" --dump-ir all
  "$host" --plugins "$builtin" --plugins "$plugins" compile "$here/workload.py" --target "$target" \
    -o "$work/out/workload-$target"
  echo "ok: compiled program.py and workload.py for $target"
done
# Bad programs: a diagnostic with its code and location, a non-zero exit and no package.
expect_error() {  # FILE TARGET PATTERN
  if "$host" --plugins "$builtin" --plugins "$plugins" compile "$here/$1" --target "$2" -o "$work/bad" 2> "$work/bad.err"; then
    echo "FAIL: $1 compiled for $2"; exit 1
  fi
  grep -q "$3" "$work/bad.err" || { echo "FAIL: $1 for $2 did not report '$3':"; cat "$work/bad.err"; exit 1; }
  test ! -e "$work/bad" || { echo "FAIL: $1 left a package"; exit 1; }
  echo "ok: $1 for $2 is rejected with '$3'"
}
expect_error bad_shape.py cpu-ref "bad_shape.py:7:.*'z' is \[64, 128\] f32 \[ext.shape\]"
expect_error bad_layout.py cpu-ref "bad_layout.py:8:.*Uses.Layout(.*facet=dist.*not accepted by target cpu-ref.*\[resolve.unaccepted\]"
# The CLI way to run a package: htp-host run with .npy files.
/usr/bin/python3 -c '
import numpy as np, sys
rng = np.random.default_rng(3)
for name in ("x", "y"):
    np.save(f"{sys.argv[1]}/{name}.npy", rng.standard_normal((64, 256)).astype(np.float32))' "$work"
"$host" --plugins "$builtin" --plugins "$plugins" run "$work/out/cpu-ref" --entry blend --inputs x="$work/x.npy" \
  --inputs y="$work/y.npy" --outputs "$work/cli" --cache "$work/cache" --json > "$work/cli.json"
/usr/bin/python3 -c '
import json, numpy as np, sys
work = sys.argv[1]
x, y, z = (np.load(f"{work}/{p}.npy") for p in ("x", "y", "cli/z"))
err = float(np.abs(z - (np.maximum(2 * x - 0.5 * y, 0) + 0.25 * x)).max())
path = json.load(open(f"{work}/cli.json"))["report"]["path"]
assert err <= 1e-5 and path == "cpu-ref", (err, path)
print(f"ok: htp-host run of cpu-ref blend: max |error| vs NumPy = {err:.2e}, path {path}")' "$work"
PYTHONPATH="$work/prefix/lib/python3/dist-packages" /usr/bin/python3 "$here/check_pack.py" \
  "$builtin" "$plugins" "$work/out" "$work/cache"
