#!/usr/bin/env bash
# System packages the tests need beyond the virtual environment: Debian's Chromium, which the
# browser test (tests/browser/) drives with Playwright. Playwright's own browser download is never
# used (it cannot be fetched here). Idempotent and quiet: one line of output.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
    echo "install_system_deps: chromium already installed ($CHROMIUM)"
    exit 0
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install_system_deps: cannot install chromium (needs root and apt-get); the browser test will be skipped"
    exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! {
    apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
} >"$log" 2>&1; then
    echo "install_system_deps: installing chromium failed; last lines of apt-get's output:" >&2
    tail -n 20 "$log" >&2
    exit 1
fi
echo "install_system_deps: installed chromium ($("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM"))"
