# Flotilla. `make up` runs it locally; `make test` tests it. See README.md.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export GOFLAGS := -buildvcs=false
export GOTOOLCHAIN := local

OUT       := $(CURDIR)/_output
BIN       := $(OUT)/bin
UNIT_PKGS  = $(shell go list ./... | grep -v -e /test/e2e/ -e /test/bench -e /hack/verifyarch)

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

.PHONY: tools
tools: ## build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok and metrics-server (cached by version)
	@hack/tools/build.sh

.PHONY: golangci-lint
golangci-lint: ## build golangci-lint, the linter make verify runs (cached by version)
	@hack/tools/build.sh golangci-lint

.PHONY: build
build: ## build Flotilla's binaries into _output/bin
	go build -o $(BIN)/ ./cmd/flotilla-apiserver ./cmd/flotilla-agent ./cmd/flotillactl ./hack/testbed ./hack/custom-metrics-emulator
	ln -sf flotillactl $(BIN)/kubectl-flotilla

# The image: static binaries, then hack/image writes them as one OCI image
# (layout and docker-archive) with go-containerregistry. No container
# runtime, no base image. Every time in the image is SOURCE_DATE_EPOCH (the
# last commit's by default), so the same commit gives the same digest.
IMAGE             := $(OUT)/image
VERSION           ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION          ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

.PHONY: image
image: ## build the OCI image of flotilla-apiserver, flotilla-agent and flotillactl into _output/image (no container runtime needed)
	rm -rf $(IMAGE)/bin
	CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o $(IMAGE)/bin/ ./cmd/flotilla-apiserver ./cmd/flotilla-agent ./cmd/flotillactl
	ln -sf flotillactl $(IMAGE)/bin/kubectl-flotilla
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) go run ./hack/image --bin-dir $(IMAGE)/bin --output $(IMAGE) \
		--arch $$(go env GOARCH) --version $(VERSION) --revision $(REVISION)

.PHONY: up
up: tools build ## start the control plane and member1..member3 in the background; writes _output/kubeconfig (HA=1: 2 flotilla-apiserver replicas on a 3-member etcd; MEMBERS=N: member1..memberN, those past member3 trimmed)
	@hack/inotify.sh
	@$(BIN)/testbed up $(if $(HA),-ha) $(if $(MEMBERS),--members $(MEMBERS))

.PHONY: down
down: ## stop everything `make up` started (safe to run twice)
	@if [ -x $(BIN)/testbed ]; then $(BIN)/testbed down; else go run ./hack/testbed down; fi

.PHONY: test
test: tools test-unit test-e2e ## unit tests, then the e2e suites against real clusters

.PHONY: test-unit
test-unit: ## unit tests (the in-process path's under the race detector too)
	go test -count=1 $(UNIT_PKGS)
	go test -race -count=1 -run '^TestInProcess' ./server/

# Three lanes side by side, one suite at a time in each (hack/e2e.sh): the
# suites that mostly wait, the ten-minute member outage with the 700 watchers, and the others.
# Each suite starts its own clusters; there are two cores. SUITE=<name> runs test/e2e/<name> alone
# (RUN=<regexp> picks tests), verbose and shuffled.
.PHONY: test-e2e
test-e2e: build ## e2e suites, each against its own environment of real clusters (SUITE=<name> [RUN=<regexp>]: one suite)
	@hack/inotify.sh
	@hack/chromium.sh >/dev/null # the console's browser tests: Debian's chromium, installed once
ifdef SUITE
	go test -count=1 -shuffle=on -timeout 30m -v ./test/e2e/$(SUITE)/ $(if $(RUN),-run '$(RUN)')
else
	hack/e2e.sh
endif

.PHONY: bench
bench: tools build ## benchmarks against real clusters; figures go to _output/bench/ and docs/performance.md
	@hack/inotify.sh
	FLOTILLA_BENCH=1 go test -count=1 -p 1 -timeout 60m -v ./test/bench/... $(if $(RUN),-run '$(RUN)')

.PHONY: soak
soak: tools build ## the soak, not in `make test`: the HA bed under a mixed workload and faults for SOAK (default 60m); a row per replica and minute in _output/soak/soak.csv, drawn in _output/soak/soak.png
	@hack/inotify.sh
	FLOTILLA_SOAK=$(or $(SOAK),60m) go test -count=1 -timeout 6h -v ./test/soak/
	go run ./hack/soakplot -in $(OUT)/soak/soak.csv -out $(OUT)/soak/soak.png

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each (default 1m; FUZZ=<regexp> picks targets); crashes land in testdata/fuzz
	FUZZTIME=$(FUZZTIME) FUZZ=$(FUZZ) FUZZPARALLEL=$(FUZZPARALLEL) hack/fuzz.sh

.PHONY: generate
generate: ## regenerate deepcopy, defaulters, OpenAPI, clients, listers, informers, apply configurations
	hack/update-codegen.sh

.PHONY: verify
# hack/verifyarch (the test that the dependency rules refuse what they should)
# needs golangci-lint, so it runs here and not in test-unit.
verify: golangci-lint ## generated code up to date, gofmt, go vet, golangci-lint (the dependency rules of docs/architecture.md)
	hack/verify-codegen.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	$(BIN)/golangci-lint run ./...
	GOLANGCI_LINT=$(BIN)/golangci-lint go test -count=1 ./hack/verifyarch/

.PHONY: clean
clean: down ## stop the environment and remove _output (the tools cache stays)
	rm -rf $(OUT)
