#!/usr/bin/env bash
# Raises the per-user limit of inotify instances to at least $1 (default
# 512) when the kernel lets us, and says so; otherwise warns and goes on.
#
# Every kube-apiserver and kube-controller-manager of a test environment
# holds about six inotify instances (one per certificate or key file it
# reloads), and kwok takes one more for each `kubectl logs -f` it serves. Two
# e2e lanes side by side, each with a host and two or three members, come
# close to the kernel's default of 128; past it, kwok ends every log follow
# right after the lines already written. kind asks for the same setting.
set -uo pipefail
want=${1:-512}
f=/proc/sys/fs/inotify/max_user_instances
[ -r "$f" ] || exit 0
have=$(cat "$f")
[ "$have" -ge "$want" ] && exit 0
if { echo "$want" >"$f"; } 2>/dev/null; then
	echo "hack/inotify.sh: fs.inotify.max_user_instances raised from $have to $want"
else
	echo "hack/inotify.sh: warning: fs.inotify.max_user_instances is $have (below $want) and cannot be raised here; log follows in the e2e suites may end early" >&2
fi
