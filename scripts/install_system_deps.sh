#!/usr/bin/env bash
# System packages the tests need beyond the virtual environment: Debian's Chromium, which the
# browser test (tests/browser/) drives with Playwright (Playwright's own browser download is never
# used: it cannot be fetched here), and bubblewrap, the sandbox the grader runs each kernel in
# (`python -m looplab.grade --isolation`; tests/test_grade_isolation.py). Idempotent and quiet: one
# line of output.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
BWRAP=/usr/bin/bwrap
HUB=tests/hub  # its package.json and package-lock.json: configurable-http-proxy
PROXY="$HUB/node_modules/.bin/configurable-http-proxy"

# configurable-http-proxy from npm, once npm is there (below, or already).
proxy() {
    if [ -x "$PROXY" ]; then
        return 0
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "install_system_deps: no npm, so no configurable-http-proxy: the JupyterHub tests (tests/hub/) are skipped"
        return 0
    fi
    if npm ci --prefix "$HUB" --no-audit --no-fund --silent >/dev/null 2>&1; then
        echo "install_system_deps: installed configurable-http-proxy ($PROXY)"
    else
        echo "install_system_deps: npm ci in $HUB failed: the JupyterHub tests (tests/hub/) are skipped" >&2
    fi
}

missing=()
[ -x "$CHROMIUM" ] || missing+=(chromium fonts-dejavu-core)
[ -x "$BWRAP" ] || missing+=(bubblewrap)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
    echo "install_system_deps: chromium, bubblewrap and npm already installed ($CHROMIUM, $BWRAP, $(command -v npm))"
    proxy
    exit 0
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install_system_deps: cannot install ${missing[*]} (needs root and apt-get); without chromium the" \
         "browser test is skipped, without bubblewrap the isolation tests are and kernels are not isolated"
    proxy
    exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! {
    apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
} >"$log" 2>&1; then
    echo "install_system_deps: installing ${missing[*]} failed; last lines of apt-get's output:" >&2
    tail -n 20 "$log" >&2
    exit 1
fi
echo "install_system_deps: installed ${missing[*]} ($("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM"), $("$BWRAP" --version 2>/dev/null || echo "$BWRAP"))"
proxy
