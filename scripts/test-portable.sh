#!/usr/bin/env bash
# README's test command once more, as on another host: one thread for Go's
# scheduler, New York time, the C locale and, where a mount namespace can be
# made, an Intel CPU model in /proc/cpuinfo. No test may depend on the host's
# CPU model, core count, locale or time zone (issue 25, item 18); CI runs the
# suite as-is first, then this.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 GOMAXPROCS=1 TZ=America/New_York LANG=C LC_ALL=C
if [ ! -e /usr/share/zoneinfo/America/New_York ]; then
	apt-get update && apt-get install -y tzdata
fi
fake=$(mktemp)
trap 'rm -f "$fake"' EXIT
sed -E 's/^(model name[[:space:]]*:).*/\1 Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz/' /proc/cpuinfo >"$fake"
echo "test-portable: GOMAXPROCS=$GOMAXPROCS TZ=$TZ LANG=$LANG ($(date +%Z) here now)"
if unshare --mount true 2>/dev/null; then
	echo "test-portable: /proc/cpuinfo says: $(grep -m1 'model name' "$fake")"
	unshare --mount bash -c 'mount --bind "$1" /proc/cpuinfo && shift && exec "$@"' _ "$fake" go test -count=1 ./...
else
	echo "test-portable: no mount namespace here (unshare --mount refused): the CPU model stays $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
	go test -count=1 ./...
fi
