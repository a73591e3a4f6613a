#!/usr/bin/env bash
# Runs every Google Benchmark binary and prints the table of figures against the targets.
set -euo pipefail
build=${1:-build}
exec /usr/bin/python3 "$(dirname "$0")/../bench/report.py" "$build" "${@:2}"
