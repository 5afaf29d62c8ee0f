#!/usr/bin/env bash
# Builds the real Kubernetes components of the test bed from the Go module
# proxy into a per-user cache keyed by version, and points _output/bin at them.
# Idempotent: a component whose binaries are in the cache is not rebuilt.
#
#   build.sh                the test bed (make tools)
#   build.sh golangci-lint  the linter of make verify only (heavy; not needed
#                           by make test)
#
#   FLOTILLA_TOOLS_CACHE  cache root (default ${XDG_CACHE_HOME:-~/.cache}/flotilla)
#   OUTPUT_BIN            where the links go (default <repo>/_output/bin)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

cache=${FLOTILLA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flotilla}
out=${OUTPUT_BIN:-$root/_output/bin}
mkdir -p "$cache" "$out" "$root/_output/logs/build"

export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CGO_ENABLED=0

# pinned <module dir> <module path> <version>: the go.mod must require exactly
# the version of versions.env, so the two can never drift apart.
pinned() {
	local got
	got=$(cd "$here/$1" && go list -m -f '{{.Version}}' "$2")
	if [ "$got" != "$3" ]; then
		echo "hack/tools/$1/go.mod pins $2 $got but versions.env says $3; run: (cd hack/tools/$1 && go get -tool $2@$3)" >&2
		exit 1
	fi
}

# build <key> <module dir> <ldflags> <pkg:binary>...: builds into
# $cache/<key>/ unless every binary is already there; then links them into $out.
build() {
	local key=$1 dir=$2 ldflags=$3; shift 3
	local dest=$cache/$key missing=() pkgs=() spec
	for spec in "$@"; do
		[ -x "$dest/${spec##*:}" ] || missing+=("$spec")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		for spec in "${missing[@]}"; do pkgs+=("${spec%%:*}"); done
		local tmp log=$root/_output/logs/build/$key.log
		tmp=$(mktemp -d "$cache/.build-$key.XXXXXX")
		echo ">> building $key (${pkgs[*]##*/}); log: $log"
		local start=$SECONDS
		# One go build for several commands shares compilation (≈20% faster
		# cold than one build per command).
		local o=$tmp/
		[ ${#missing[@]} -eq 1 ] && o=$tmp/${missing[0]##*:}
		if ! (cd "$here/$dir" && go build -trimpath -ldflags "$ldflags" -o "$o" "${pkgs[@]}") >"$log" 2>&1; then
			tail -30 "$log" >&2; rm -rf "$tmp"; exit 1
		fi
		mkdir -p "$dest"
		# Binaries are named after the last element of their package path.
		for spec in "${missing[@]}"; do mv -f "$tmp/${spec##*:}" "$dest/${spec##*:}"; done
		rm -rf "$tmp"
		echo ">> built $key in $((SECONDS - start)) s"
	fi
	for spec in "$@"; do ln -sfn "$dest/${spec##*:}" "$out/${spec##*:}"; done
}

case ${1:-testbed} in
testbed) ;;
golangci-lint)
	pinned golangci-lint github.com/golangci/golangci-lint/v2 "$GOLANGCI_LINT_VERSION"
	# Its main reads the version from these (goreleaser's stamps); without
	# them golangci-lint --version says "(devel)".
	build "golangci-lint-$GOLANGCI_LINT_VERSION" golangci-lint \
		"-s -w -X main.version=${GOLANGCI_LINT_VERSION#v} -X main.commit=$GOLANGCI_LINT_VERSION -X main.date=1970-01-01T00:00:00Z" \
		github.com/golangci/golangci-lint/v2/cmd/golangci-lint:golangci-lint
	exit 0
	;;
*)
	echo "usage: $0 [testbed|golangci-lint]" >&2
	exit 2
	;;
esac

pinned kubernetes k8s.io/kubernetes "$K8S_VERSION"
pinned etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
pinned kwok sigs.k8s.io/kwok "$KWOK_VERSION"
pinned metrics-server sigs.k8s.io/metrics-server "$METRICS_SERVER_VERSION"

# The version strings hack/lib/version.sh would stamp; without them /version
# reports v0.0.0-master.
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
k8s_ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	k8s_ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

build "etcd-$ETCD_VERSION" etcd "-s -w" go.etcd.io/etcd/server/v3:etcd
build "kwok-$KWOK_VERSION" kwok "-s -w" sigs.k8s.io/kwok/cmd/kwok:kwok
# kwok run on its own (not through kwokctl) has no stages: ship the "fast" set
# kwokctl uses, from the kwok module itself, beside the binary.
stages=$cache/kwok-$KWOK_VERSION/kwok-stages.yaml
if [ ! -s "$stages" ]; then
	kwokdir=$(cd "$here/kwok" && go mod download sigs.k8s.io/kwok && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
	for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
		pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
		echo "---"; cat "$kwokdir/kustomize/stage/$f"
	done >"$stages.tmp"
	mv "$stages.tmp" "$stages"
fi
ln -sfn "$stages" "$out/kwok-stages.yaml"
# ... and the resource-usage emulation metrics-server scrapes: the Metric that
# serves /metrics/nodes/{nodeName}/metrics/resource and the usage of each pod
# taken from its kwok.x-k8s.io/usage-cpu and usage-memory annotations.
# A node also uses what its system takes (kubelet, runtime): 50m of CPU and
# 256Mi on top of its pods, as an idle real node shows, so an empty node has
# metrics too (metrics-server drops a node whose CPU or memory is zero).
metrics=$cache/kwok-$KWOK_VERSION/kwok-metrics-system.yaml
if [ ! -s "$metrics" ]; then
	kwokdir=$(cd "$here/kwok" && go mod download sigs.k8s.io/kwok && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
	for f in resource/metrics-resource.yaml usage/usage-from-annotation.yaml; do
		echo "---"; cat "$kwokdir/kustomize/metrics/$f"
	done | sed -e "s|value: 'node.CumulativeUsage(\"cpu\")'|value: 'node.CumulativeUsage(\"cpu\") + node.SinceSecond() * 0.05'|" \
		-e "s|value: 'node.Usage(\"memory\")'|value: 'node.Usage(\"memory\") + 268435456.0'|" >"$metrics.tmp"
	grep -q 'node.SinceSecond() \* 0.05' "$metrics.tmp" && grep -q '+ 268435456.0' "$metrics.tmp" || {
		echo "kwok's metrics-resource.yaml changed: the node system usage was not added" >&2
		exit 1
	}
	mv "$metrics.tmp" "$metrics"
fi
ln -sfn "$metrics" "$out/kwok-metrics.yaml"
# metrics-server's Makefile stamps its version into client-go's version package.
build "metrics-server-$METRICS_SERVER_VERSION" metrics-server \
	"-s -w -X k8s.io/client-go/pkg/version.gitVersion=$METRICS_SERVER_VERSION -X k8s.io/client-go/pkg/version.buildDate=1970-01-01T00:00:00Z" \
	sigs.k8s.io/metrics-server/cmd/metrics-server:metrics-server

build "k8s-$K8S_VERSION" kubernetes "$k8s_ldflags" \
	k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver \
	k8s.io/kubernetes/cmd/kube-controller-manager:kube-controller-manager \
	k8s.io/kubernetes/cmd/kube-scheduler:kube-scheduler \
	k8s.io/kubernetes/cmd/kubectl:kubectl
