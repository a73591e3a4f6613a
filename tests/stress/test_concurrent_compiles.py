"""Concurrency (issue 11): a compile-and-run job per example and target (16 or more), started at once as
processes sharing one build cache, and the same compiles from as many Python threads of one process, produce
exactly the packages sequential compiles produce (byte for byte, timings pinned), and every run matches
NumPy."""
import concurrent.futures
import filecmp
import importlib
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import htp

EXAMPLES = pathlib.Path(os.environ.get("HTP_EXAMPLES_DIR", pathlib.Path(__file__).parents[2] / "examples"))
sys.path.insert(0, str(EXAMPLES))

import example_index  # noqa: E402  (examples/example_index.py: every example's ENTRIES)


def _runnable_jobs():
    """(example module, entry function, target) for every example run that checks itself against NumPy."""
    jobs = []
    for module_name, target, entry in example_index.runs(EXAMPLES):
        module = importlib.import_module(module_name)
        if hasattr(module, "make_inputs") and hasattr(module, "reference"):
            jobs.append((module_name, entry, target))
    return jobs


# Every example on every target it lists, at once, plus two duplicates racing for the same cache keys.
JOBS = _runnable_jobs()
JOBS += JOBS[:2]
assert len(JOBS) >= 16, f"the stress test needs at least 16 jobs, the examples give {len(JOBS)}"


def job_name(i, job):
    return f"{i:02d}-{job[0]}-{job[2]}"


def compile_job(ctx, job, out):
    module = importlib.import_module(job[0])
    return example_index.context_for(module, ctx).compile(getattr(module, job[1]), target=job[2], out=out,
                                                          pin_timings=True)


def run_job(index: int, out: str, cache: str) -> dict:
    """One process's job: compile, run with the shared cache, check against the example's reference."""
    job = JOBS[index]
    module = importlib.import_module(job[0])
    ctx = example_index.context_for(module)
    pkg = compile_job(ctx, job, out)
    inputs = module.make_inputs(np.random.default_rng(0))
    expected = module.reference(**{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()})
    result = htp.bind(pkg, ctx).run(cache_dir=cache, **inputs)
    errors = {name: float(np.max(np.abs(result[name] - want))) for name, want in expected.items()}
    return {"errors": errors, "report": result.report}


def files_of(root: pathlib.Path):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.relative_to(root).parts[0] not in ("logs", "build"))


def assert_same_package(a: pathlib.Path, b: pathlib.Path):
    fa, fb = files_of(a), files_of(b)
    assert fa == fb, f"{a} and {b} hold different files"
    _, mismatch, errors = filecmp.cmpfiles(a, b, fa, shallow=False)
    assert not mismatch and not errors, f"{b} differs from the sequential compile {a} in {mismatch + errors}"


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    root = tmp_path_factory.mktemp("sequential")
    ctx = htp.Context()
    for i, job in enumerate(JOBS):
        compile_job(ctx, job, root / job_name(i, job))
    return root


def test_concurrent_processes_share_one_cache(sequential, tmp_path):
    cache = tmp_path / "cache"
    procs = []
    for i, job in enumerate(JOBS):
        out = tmp_path / job_name(i, job)
        procs.append(subprocess.Popen([sys.executable, __file__, "job", str(i), str(out), str(cache)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for i, (job, p) in enumerate(zip(JOBS, procs)):
        stdout, stderr = p.communicate(timeout=900)
        assert p.returncode == 0, f"job {job_name(i, job)} failed:\n{stderr}"
        outcome = json.loads(stdout.strip().splitlines()[-1])
        for name, err in outcome["errors"].items():
            assert err < 1e-3, f"{job_name(i, job)}: output {name} differs from NumPy by {err}"
        assert_same_package(sequential / job_name(i, job), tmp_path / job_name(i, job))
    # The cache holds no temporary or partial entries once everyone is done.
    leftovers = [p for p in cache.rglob("*") if ".tmp" in p.name]
    assert not leftovers, f"temporary files left in the cache: {leftovers}"


def test_concurrent_threads_compile_identically(sequential, tmp_path):
    ctx = htp.Context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(JOBS)) as pool:
        futures = {pool.submit(compile_job, ctx, job, tmp_path / job_name(i, job)): i for i, job in enumerate(JOBS)}
        for f in concurrent.futures.as_completed(futures):
            f.result()
    for i, job in enumerate(JOBS):
        assert_same_package(sequential / job_name(i, job), tmp_path / job_name(i, job))


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "job":
    print(json.dumps(run_job(int(sys.argv[2]), sys.argv[3], sys.argv[4])))
