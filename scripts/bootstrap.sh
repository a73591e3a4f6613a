#!/usr/bin/env bash
# Installs the Debian packages HTP's build and tests need, only those that are missing. Idempotent.
#   scripts/bootstrap.sh --check   lists the missing packages and exits 1 if there are any, installs nothing
#                                  (the pip build backend, scripts/packaging, runs it to explain a failure)
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache pkg-config
  libboost-dev            # Boost.DLL and Boost.Graph (header-only parts)
  pybind11-dev python3-dev python3-numpy python3-pytest python3-jsonschema
  nlohmann-json3-dev libspdlog-dev libcli11-dev libdlpack-dev libssl-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  graphviz                # renders `resolve --dot` output and htp.show's plan graph; tested
  python3-venv python3-pip  # `pip install .` into a venv (docs/python.md); tested
  python3-torch           # torch tensors through DLPack (python.tensors)
  chromium                # headless browser that python.report_html renders htp.show's report in
  mlir-19-tools llvm-19   # the MLIR island (mlir-opt, mlir-translate, llc): python.mlir_island, python.mlir_lowering
)

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "bootstrap: error: no dpkg-query; this script knows Debian's packages only: ${packages[*]}" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#packages[@]} packages present"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "bootstrap: missing ${missing[*]}"
  exit 1
fi

echo "bootstrap: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "bootstrap: error: not root and no sudo; install these packages: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
