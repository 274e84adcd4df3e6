#!/bin/bash
# Installs playwright-core into tests/browser/node_modules with npm, once:
# exits 0 when it is there. Tests run concurrently and npm ci begins by
# removing node_modules, and a package directory appears before its files
# do: the check too is made under the lock, by a stamp written when an
# install ran to its end.
cd "$(dirname "$0")" || exit 1
exec 9<.
flock 9 || exit 1
[ -e node_modules/.dcprof-installed ] && exit 0
command -v npm >/dev/null 2>&1 || {
	echo "npm is not installed" >&2
	exit 1
}
npm ci --no-audit --no-fund --loglevel=error &&
	touch node_modules/.dcprof-installed
