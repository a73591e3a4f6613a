"""Runs the extension pack's compiled packages and compares them with NumPy (called by run.sh)."""
import json
import sys

import numpy as np

import htp

builtin, pack, out, cache = sys.argv[1:5]
ctx = htp.Context(plugins=[builtin, pack])
rng = np.random.default_rng(12)


def blend_inputs():
    x = rng.standard_normal((64, 256)).astype(np.float32)
    y = rng.standard_normal((64, 256)).astype(np.float32)
    return {"x": x, "y": y}, np.maximum(2.0 * x - 0.5 * y, 0.0) + 0.25 * x


def shifted_exp_inputs():
    x = rng.standard_normal((32, 128)).astype(np.float32)
    y = rng.standard_normal((32, 128)).astype(np.float32)
    t = 0.5 * x + 1.5 * y
    z = np.empty_like(t)
    for r in range(2):  # the kernel normalises each 16-row tile by its own row maxima
        s = t[16 * r:16 * r + 16]
        z[16 * r:16 * r + 16] = np.exp(s - s.max(axis=1, keepdims=True))
    return {"x": x, "y": y}, z


# Which pack passes each plan must contain: the dialect lowering, the layout conversions and the
# target's own axpby lowering (never the other target's).
EXPECTED_PASSES = {
    "cpu-ref": {"ext.lower-elementwise", "ext.axpby-cpu-ref", "place.to-axe", "place.from-axe", "cpu-ref.emit",
                "ext.kernel-stats"},
    "pto-a2a3sim": {"ext.lower-elementwise", "ext.axpby-to-tile", "place.to-axe", "place.from-axe", "pto.emit",
                    "ext.kernel-stats"},
}
EXPECTED_PATH = {"cpu-ref": "cpu-ref", "pto-a2a3sim": "htp-cpu-sim"}

passed = failures = 0
for target in ("cpu-ref", "pto-a2a3sim"):
    pkg = htp.Package(f"{out}/{target}")
    passes = set(pkg.passes)
    missing = EXPECTED_PASSES[target] - passes
    wrong = {"ext.axpby-to-tile", "ext.axpby-cpu-ref"} - EXPECTED_PASSES[target] & passes
    assert not missing and not wrong, f"{target}: plan passes {sorted(passes)}; missing {missing}, unexpected {wrong}"
    # The analysis pass's result, as the module attribute after it (the IR dump of its step).
    (dump,) = [n for n in pkg.dumps() if n.endswith("_ext.kernel-stats.py")]
    with open(pkg.path / "ir" / dump.replace(".py", ".ast.json"), encoding="utf-8") as f:
        stats = json.load(f)["attrs"]["ext.kernel_stats"]
    assert stats["shifted_exp"] == {"load": 2, "store": 1, "other": stats["shifted_exp"]["other"]} and \
        stats["shifted_exp"]["other"] > 0, f"{target}: ext.kernel_stats = {stats}"
    print(f"ok: {target} ext.kernel-stats: {json.dumps(stats, sort_keys=True)}")
    for entry, make in (("blend", blend_inputs), ("shifted_exp", shifted_exp_inputs)):
        args, expected = make()
        bound = htp.bind(pkg, ctx)
        result = bound.run(entry, cache_dir=cache, **args)
        err = float(np.max(np.abs(result.outputs["z"] - expected)))
        path = result.report.get("path")
        ok = err <= 1e-4 and path == EXPECTED_PATH[target]
        passed, failures = passed + ok, failures + (not ok)
        print(f"{'ok' if ok else 'FAIL'}: {target} {entry}: max |error| vs NumPy = {err:.2e}, path {path}")
        if target == "cpu-ref":
            again = bound.run(entry, cache_dir=cache, **args)
            build = again.report["build"]
            if build["cache"] != "hit" or build["compiler_invocations"] != 0:
                failures += 1
                print(f"FAIL: cpu-ref rerun of {entry} rebuilt: {json.dumps(build)}")
            else:
                passed += 1
                print(f"ok: cpu-ref rerun of {entry} reuses the cached build (no compiler)")

# The WSP workload: one task graph, run for two runtime sizes of the symbolic dim B.
for target in ("cpu-ref", "pto-a2a3sim"):
    bound = htp.bind(htp.Package(f"{out}/workload-{target}"), ctx)
    for rows in (64, 96):
        x = rng.standard_normal((rows, 128)).astype(np.float32)
        y = rng.standard_normal((rows, 128)).astype(np.float32)
        even = (np.arange(rows) // 16 % 2 == 0)[:, None]
        expected = np.where(even, 3.0 * x - y, 0.5 * x)
        result = bound.run("alternate", cache_dir=cache, X=x, Y=y)
        err = float(np.max(np.abs(result.outputs["Z"] - expected)))
        ok = err <= 1e-5 and result.report.get("path") == EXPECTED_PATH[target]
        passed, failures = passed + ok, failures + (not ok)
        print(f"{'ok' if ok else 'FAIL'}: {target} workload alternate, B={rows}: max |error| vs NumPy = {err:.2e}")
print(f"{passed} passed, {failures} failed")
sys.exit(1 if failures else 0)
