#!/usr/bin/env bash
# Regenerates deepcopy, defaulters, OpenAPI, the typed clientset, listers,
# informers and apply configurations of apis/ with k8s.io/code-generator's
# kube_codegen.sh, at the version go.mod pins.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
# The generators are installed here rather than into the user's GOPATH/bin.
export GOBIN=$root/_output/codegen-bin
mkdir -p "$GOBIN"

# On a new machine the module is not in the module cache yet: go list -m
# then prints no directory.
go mod download k8s.io/code-generator
CODEGEN_PKG=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
# shellcheck source=/dev/null
source "$CODEGEN_PKG/kube_codegen.sh"

module=github.com/flotilla-io/flotilla
boilerplate=$root/hack/boilerplate.go.txt

kube::codegen::gen_helpers --boilerplate "$boilerplate" apis

kube::codegen::gen_openapi \
	--output-dir apis/generated/openapi \
	--output-pkg "$module/apis/generated/openapi" \
	--extra-pkgs k8s.io/api/core/v1 \
	--extra-pkgs k8s.io/apimachinery/pkg/util/intstr \
	--extra-pkgs k8s.io/api/autoscaling/v2 \
	--extra-pkgs k8s.io/metrics/pkg/apis/metrics/v1beta1 \
	--extra-pkgs k8s.io/metrics/pkg/apis/custom_metrics/v1beta1 \
	--extra-pkgs k8s.io/metrics/pkg/apis/custom_metrics/v1beta2 \
	--extra-pkgs k8s.io/api/networking/v1 \
	--extra-pkgs k8s.io/api/admissionregistration/v1 \
	--extra-pkgs k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1 \
	--output-model-name-file zz_generated.model_name.go \
	--report-filename hack/api-rules-violations.list \
	--update-report \
	--boilerplate "$boilerplate" \
	apis

# The OpenAPI models of our types, for the apply configurations' type model
# (without it the generated fake clientset cannot apply or even create).
go run ./hack/openapi-schema > "$root/_output/openapi-schema.json"

kube::codegen::gen_client \
	--applyconfig-openapi-schema "$root/_output/openapi-schema.json" \
	--with-watch --with-applyconfig \
	--applyconfig-externals "k8s.io/api/core/v1.ResourceQuotaStatus:k8s.io/client-go/applyconfigurations/core/v1,k8s.io/api/networking/v1.IngressLoadBalancerStatus:k8s.io/client-go/applyconfigurations/networking/v1,k8s.io/api/networking/v1.IngressStatus:k8s.io/client-go/applyconfigurations/networking/v1,k8s.io/api/networking/v1.IngressSpec:k8s.io/client-go/applyconfigurations/networking/v1,k8s.io/api/core/v1.ServiceStatus:k8s.io/client-go/applyconfigurations/core/v1" \
	--output-dir apis/generated \
	--output-pkg "$module/apis/generated" \
	--boilerplate "$boilerplate" \
	apis
