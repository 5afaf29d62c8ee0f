#!/usr/bin/env bash
# Runs every Go native fuzz target of the repository, one after another, each
# for FUZZTIME (default 1m): `make fuzz FUZZTIME=10m`. FUZZ narrows the
# targets to those whose name matches the regular expression. `make test`
# runs the same targets on their seed corpus only (plain go test). Each new
# interesting input is minimized for at most FUZZMINIMIZETIME (default 5s,
# not go test's 60s, which on two cores leaves little time to explore).
# FUZZPARALLEL sets the number of fuzzing workers (go test -parallel; default
# GOMAXPROCS), so two runs can share the machine with one worker each.
# A crash leaves its input under the package's testdata/fuzz/<target>/,
# where plain go test replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-1m}
filter=${FUZZ:-.}
failed=()
raced=()
ran=0
# count prints how many inputs a corpus folder holds (0 when it is absent).
count() { if [[ -d $1 ]]; then find "$1" -type f | wc -l; else echo 0; fi; }
while IFS=: read -r file name; do
	pkg=./$(dirname "$file")
	[[ $name =~ $filter ]] || continue
	echo ">> $name in $pkg for $fuzztime"
	ran=$((ran + 1))
	corpus=$(dirname "$file")/testdata/fuzz/$name
	before=$(count "$corpus")
	log=$(mktemp)
	if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -fuzzminimizetime="${FUZZMINIMIZETIME:-5s}" ${FUZZPARALLEL:+-parallel="$FUZZPARALLEL"} "$pkg" 2>&1 | tee "$log"; then
		after=$(count "$corpus")
		# Go before 1.27 may fail a run as its -fuzztime ends, with
		# "context deadline exceeded" and no failing input written: a race
		# in the fuzzing coordinator (go.dev/issue/75804), not a crash.
		if [[ $after == "$before" ]] && grep -q '^    context deadline exceeded$' "$log"; then
			echo ">> $name: stopped by the coordinator's deadline race (go.dev/issue/75804); no failing input was found"
			raced+=("$name")
		else
			failed+=("$name ($pkg)")
		fi
	fi
	rm -f "$log"
done < <(git ls-files '*_test.go' | xargs grep -oE '^func Fuzz[A-Za-z0-9_]+' | sed 's/func //' | sort -u)
echo ">> $ran fuzz target(s) run for $fuzztime each"
if ((${#raced[@]})); then
	printf 'ended by the coordinator race, no failing input: %s\n' "${raced[@]}"
fi
if ((${#failed[@]})); then
	printf 'failed: %s\n' "${failed[@]}"
	exit 1
fi
