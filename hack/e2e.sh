#!/usr/bin/env bash
# Runs the e2e suites in three lanes side by side, one suite at a time in
# each: the suites that mostly wait (autoscaling windows, failover
# timeouts, leader elections) in one, the long outage (ten minutes of
# waiting, about 13 in all) with the many-watchers and console suites in
# another, the rest in the third. Each suite
# starts its own environment of real clusters on random loopback ports, so
# two never share anything. A lane's output is printed when it ends; the
# script fails when any lane fails.
#
#   E2E_WAITING  packages of the waiting lane (default below)
#   E2E_LONG     packages of the long lane (default below)
#   E2E_TIMEOUT  go test -timeout per package (default 30m)
set -uo pipefail
cd "$(dirname "$0")/.."

# security and race do not mostly wait: they are here to even the lanes
# (about 1,250 s each on two cores).
waiting=${E2E_WAITING:-./test/e2e/autoscaling ./test/e2e/failover ./test/e2e/ha ./test/e2e/pull ./test/e2e/race ./test/e2e/security}
long=${E2E_LONG:-./test/e2e/outage ./test/e2e/watchers ./test/e2e/console}
timeout=${E2E_TIMEOUT:-30m}
mapfile -t all < <(go list ./test/e2e/...)
rest=()
for p in "${all[@]}"; do
	case " $waiting $long " in
	*" ./${p#github.com/flotilla-io/flotilla/} "*) ;;
	*) rest+=("$p") ;;
	esac
done

logs=$(mktemp -d)
# shellcheck disable=SC2086
go test -count=1 -p 1 -timeout "$timeout" $waiting >"$logs/waiting.log" 2>&1 &
a=$!
go test -count=1 -p 1 -timeout "$timeout" "${rest[@]}" >"$logs/rest.log" 2>&1 &
b=$!
# shellcheck disable=SC2086
go test -count=1 -p 1 -timeout "$timeout" $long >"$logs/long.log" 2>&1 &
c=$!
wait $a
ra=$?
wait $b
rb=$?
wait $c
rc=$?
cat "$logs/waiting.log" "$logs/rest.log" "$logs/long.log"
rm -rf "$logs"
[ "$ra" -eq 0 ] && [ "$rb" -eq 0 ] && [ "$rc" -eq 0 ]
