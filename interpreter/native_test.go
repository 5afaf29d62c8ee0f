package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestHookEnabled(t *testing.T) {
	t.Parallel()
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	tests := []struct {
		gvk  schema.GroupVersionKind
		op   Operation
		want bool
	}{
		{deploymentGVK, InterpretReplica, true},
		{daemonSetGVK, InterpretReplica, false},
		{jobGVK, ReviseReplica, true},
		{podGVK, ReviseReplica, false},
		{secretGVK, Retain, true},
		{cm, Retain, false},
		{cm, InterpretStatus, true},
		{hpaGVK, AggregateStatus, true},
		{cm, AggregateStatus, false},
		{pdbGVK, InterpretHealth, true},
		{jobGVK, InterpretHealth, false},
		{cronJobGVK, InterpretDependency, true},
		{serviceImportGVK, InterpretDependency, true},
		{deploymentGVK, Prune, false},
		{schema.GroupVersionKind{Group: "apps", Version: "v1beta1", Kind: "Deployment"}, InterpretReplica, false},
	}
	n := NewNative()
	for _, tc := range tests {
		if got := n.HookEnabled(tc.gvk, tc.op); got != tc.want {
			t.Errorf("HookEnabled(%s, %s) = %v, want %v", tc.gvk, tc.op, got, tc.want)
		}
	}
}
