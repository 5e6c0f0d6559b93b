#!/usr/bin/env bash
# Client tests: JavaScript (node --test), Python (pytest), the protocol
# fixture in both, and the viewer in headless Chromium. Installs what they
# need. Uses the arbiter binary from $ARBITER_BIN, else
# ${CARGO_TARGET_DIR:-target}/release/arbiter (built here when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

target="${CARGO_TARGET_DIR:-$ROOT/target}"
if [ -z "${ARBITER_BIN:-}" ]; then
  # Always (re)build: a stale binary would test old code. Cheap when fresh.
  cargo build --release --bin arbiter
  export ARBITER_BIN="$target/release/arbiter"
fi

if [ ! -x /usr/bin/chromium ] && [ -z "${CHROMIUM:-}" ]; then
  if command -v apt-get >/dev/null; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium
  fi
fi

# Every prerequisite must be here now: a test that skips for want of one
# could never fail.
[ -x "$ARBITER_BIN" ] || { echo "clients/ci.sh: no arbiter binary at $ARBITER_BIN" >&2; exit 1; }
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || { echo "clients/ci.sh: chromium could not be installed" >&2; exit 1; }
export ARBITER_REQUIRE_ALL=1

echo "== JavaScript client"
(cd clients/js && npm ci --no-audit --no-fund && node --test test/)

echo "== Python client"
PY=${PYTHON:-python3}
"$PY" -m pip install -q ./clients/python pytest
(cd /tmp && "$PY" -m pytest -q "$ROOT/clients/python/tests")
