#!/bin/bash
# Sourced by the tests/t scripts after test-lib.sh: need_browser makes sure
# Debian's chromium, node and playwright-core (installed on demand into
# tests/browser/node_modules with npm) are there. Without them the test
# fails under CI (CI set, which must run it) and skips loudly otherwise.
BROWSER_DIR=$TOP/tests/browser
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM

_browser_missing() {
	if [ -n "${CI:-}" ]; then
		die "browser test cannot run under CI: $*"
	fi
	echo "$TEST_NAME: SKIPPING THE BROWSER TEST: $* (CI would fail here)" >&2
	skip "$*"
}

need_browser() {
	local v
	[ -x "$CHROMIUM" ] ||
		_browser_missing "no chromium at '$CHROMIUM' (run scripts/install-deps.sh)"
	v=$("$CHROMIUM" --headless --no-sandbox --disable-gpu --version 2>&1) ||
		_browser_missing "'$CHROMIUM --version' failed: $(echo "$v" | head -c 300)"
	command -v node >/dev/null 2>&1 || _browser_missing "node is not installed"
	"$BROWSER_DIR/install.sh" >"$TMP/npm.log" 2>&1 ||
		_browser_missing "npm could not install playwright-core: $(tail -c 500 "$TMP/npm.log")"
}

# flame MODE PAGE [ARGS...]: run tests/browser/flame.js, its JSON on stdout;
# on failure its error's first lines come again last, where a summary of
# the suite's failures looks
flame() {
	local rc=0

	node "$BROWSER_DIR/flame.js" "$@" 2>"$TMP/flame.err" || rc=$?
	cat "$TMP/flame.err" >&2
	[ "$rc" -eq 0 ] || head -n 2 "$TMP/flame.err" | cut -c1-300 >&2
	return "$rc"
}
