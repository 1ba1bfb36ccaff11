#!/usr/bin/env bash
# canary.sh — run `panehost canary` offline against the CLIs that
# capture.sh installed, and keep each report as evidence.
#
# Usage:
#   bash adapters/evidence/canary.sh [CACHE_DIR]
#
#   CACHE_DIR  where capture.sh installed the CLIs, one npm prefix per
#              runtime (CACHE_DIR/<runtime>). Default:
#              ${PANEHOST_CLI_CACHE:-$HOME/.cache/panehost/clis}
#   PANEHOST   the panehost binary (default: panehost on PATH)
#   CANARY_ONLY="codex qwen"   optional: only these runtimes
#
# For each runtime it runs
#   panehost canary --runtime ID --binary CACHE_DIR/ID/node_modules/.bin/EXE --json
# (EXE: the `executable` of adapters/evidence/ID.json, `qodercli` for qoder;
# CACHE_DIR/ID/bin/EXE for a runtime from PyPI, a virtual environment; for
# omp, whose `omp` is a Bun script, PATH starts with that prefix's
# node_modules/.bin, where bun is)
# (the probes run in a private network namespace; nothing is installed or
# promoted) with a state directory of its own, and writes
# adapters/evidence/canary/<runtime>.json: the report with the cache written
# as `<cache>`, the invoking user's home as `$HOME`, and the scratch state
# directory as `<state>`. A runtime that is not installed gets no file.
#
# Needs: bash, node (the CLIs are node packages or launchers), python3.
set -euo pipefail

EVIDENCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_DIR="${1:-${PANEHOST_CLI_CACHE:-$HOME/.cache/panehost/clis}}"
PANEHOST="${PANEHOST:-panehost}"
# Every runtime whose evidence record here pins a version (npm or PyPI).
pinned_runtimes() {
  python3 -c 'import json, pathlib, sys
print(" ".join(sorted(p.stem for p in pathlib.Path(sys.argv[1]).glob("*.json")
                      if isinstance(json.loads(p.read_text()).get("pinned_version"), str))))' "$EVIDENCE_DIR"
}
RUNTIMES=(${CANARY_ONLY:-$(pinned_runtimes)})
# Runtimes whose interpreter is in their own prefix's bin directory.
BESIDE=(omp)
OUT_DIR="$EVIDENCE_DIR/canary"
mkdir -p "$OUT_DIR"
CACHE_DIR="$(cd "$CACHE_DIR" && pwd)"
STATE="$(mktemp -d)"
trap 'rm -rf "$STATE"' EXIT

for runtime in "${RUNTIMES[@]}"; do
  exe="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["executable"])' "$EVIDENCE_DIR/$runtime.json" 2>/dev/null || echo "$runtime")"
  bin="$CACHE_DIR/$runtime/node_modules/.bin/$exe"
  # A runtime from PyPI is a virtual environment (capture.sh).
  if [[ ! -e "$bin" && -x "$CACHE_DIR/$runtime/bin/$exe" ]]; then bin="$CACHE_DIR/$runtime/bin/$exe"; fi
  if [[ ! -x "$bin" ]]; then
    echo "[canary] $runtime: not installed at $bin; skipped" >&2
    continue
  fi
  # A CLI whose interpreter is installed beside it (omp: a Bun script, and
  # bun in the same prefix) finds it through PATH: that directory first.
  search="$PATH"
  if [[ " ${BESIDE[*]} " == *" $runtime "* ]]; then search="$(dirname "$bin"):$PATH"; fi
  status=0
  report="$(PATH="$search" DISABLE_AUTOUPDATER=1 "$PANEHOST" --state-dir "$STATE" canary --runtime "$runtime" --binary "$bin" --json)" || status=$?
  echo "[canary] $runtime: exit $status" >&2
  REPORT="$report" CACHE="$CACHE_DIR" STATE_DIR="$STATE" python3 - "$OUT_DIR/$runtime.json" <<'PY'
import json, os, sys

text = os.environ["REPORT"]
for path, name in ((os.environ["CACHE"], "<cache>"), (os.environ["STATE_DIR"], "<state>"), (os.environ["HOME"], "$HOME")):
    text = text.replace(path, name)
report = json.loads(text)
with open(sys.argv[1], "w") as f:
    json.dump(report, f, indent=2)
    f.write("\n")
PY
done
