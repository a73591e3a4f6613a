#!/usr/bin/env bash
# Every plugin in DIR exports only htp_* symbols (nm -D --defined-only).
set -euo pipefail
dir=$1
count=0
status=0
for so in "$dir"/*.so; do
  count=$((count + 1))
  bad=$(nm -D --defined-only "$so" | awk '{print $NF}' | grep -v '^htp_' || true)
  if [ -n "$bad" ]; then
    echo "FAIL: $so exports non-htp symbols: $bad"
    status=1
  else
    echo "ok: $so exports only: $(nm -D --defined-only "$so" | awk '{print $NF}' | tr '\n' ' ')"
  fi
done
[ "$count" -ge 6 ] || { echo "FAIL: expected at least 6 plugins in $dir, found $count"; exit 1; }
exit $status
