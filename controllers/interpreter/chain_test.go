package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// numbered answers GetReplicas with its own number for the kinds it hooks.
type numbered struct {
	Interpreter
	replicas int32
	hooks    map[schema.GroupVersionKind]bool
}

func (n numbered) HookEnabled(gvk schema.GroupVersionKind, op Operation) bool {
	return op == InterpretReplica && n.hooks[gvk]
}

func (n numbered) GetReplicas(*unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	return n.replicas, nil, nil
}

func TestChainOrder(t *testing.T) {
	t.Parallel()
	a := schema.GroupVersionKind{Group: "a.io", Version: "v1", Kind: "A"}
	b := schema.GroupVersionKind{Group: "b.io", Version: "v1", Kind: "B"}
	c := schema.GroupVersionKind{Group: "c.io", Version: "v1", Kind: "C"}
	chain := Chain{
		numbered{replicas: 1, hooks: map[schema.GroupVersionKind]bool{a: true}},
		numbered{replicas: 2, hooks: map[schema.GroupVersionKind]bool{a: true, b: true}},
		numbered{replicas: 3},
	}
	for gvk, want := range map[schema.GroupVersionKind]int32{a: 1, b: 2, c: 3} {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		if got, _, _ := chain.GetReplicas(obj); got != want {
			t.Errorf("%s answered by the interpreter of %d, want %d", gvk.Kind, got, want)
		}
	}
	if !chain.HookEnabled(b, InterpretReplica) || chain.HookEnabled(c, InterpretReplica) || chain.HookEnabled(a, Retain) {
		t.Error("HookEnabled does not say whether some interpreter has the hook")
	}
}
