#!/usr/bin/env bash
# Fails when the generated code of apis/ differs from what update-codegen.sh makes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/hack/update-codegen.sh"
if ! git diff --exit-code --stat -- apis hack/api-rules-violations.list || [ -n "$(git status --porcelain -- apis)" ]; then
	git status --short -- apis
	echo "generated code is out of date: run make generate" >&2
	exit 1
fi
