package interpreter

import (
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// listing answers GetDependencies with its own list (or error) for the
// kinds it hooks.
type listing struct {
	Interpreter
	deps  []DependentObjectReference
	err   error
	hooks map[schema.GroupVersionKind]bool
}

func (l listing) HookEnabled(gvk schema.GroupVersionKind, op Operation) bool {
	return op == InterpretDependency && l.hooks[gvk]
}

func (l listing) GetDependencies(*unstructured.Unstructured) ([]DependentObjectReference, error) {
	return l.deps, l.err
}

// TestDependencyUnion: every customization defining
// dependencyInterpretation for a kind adds its dependencies; the union
// comes first in a chain for that operation only.
func TestDependencyUnion(t *testing.T) {
	t.Parallel()
	a := schema.GroupVersionKind{Group: "a.io", Version: "v1", Kind: "A"}
	b := schema.GroupVersionKind{Group: "b.io", Version: "v1", Kind: "B"}
	onA := map[schema.GroupVersionKind]bool{a: true}
	cm := func(name string) DependentObjectReference {
		return DependentObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: name}
	}
	selected := DependentObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "ns",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}
	for _, tc := range []struct {
		name    string
		members map[string]Interpreter
		gvk     schema.GroupVersionKind
		hooked  bool
		want    []DependentObjectReference
		wantErr bool
	}{
		{name: "no member", gvk: a},
		{name: "one customization", members: map[string]Interpreter{"x": listing{deps: []DependentObjectReference{cm("one")}, hooks: onA}},
			gvk: a, hooked: true, want: []DependentObjectReference{cm("one")}},
		{name: "two customizations: the union, in name order, each once", members: map[string]Interpreter{
			"b-second": listing{deps: []DependentObjectReference{cm("shared"), cm("two"), selected}, hooks: onA},
			"a-first":  listing{deps: []DependentObjectReference{cm("one"), cm("shared")}, hooks: onA},
		}, gvk: a, hooked: true, want: []DependentObjectReference{cm("one"), cm("shared"), cm("two"), selected}},
		{name: "another kind's customization is not asked", members: map[string]Interpreter{
			"x": listing{deps: []DependentObjectReference{cm("one")}, hooks: onA},
			"y": listing{deps: []DependentObjectReference{cm("other")}, hooks: map[schema.GroupVersionKind]bool{b: true}},
		}, gvk: a, hooked: true, want: []DependentObjectReference{cm("one")}},
		{name: "an error fails the answer", members: map[string]Interpreter{
			"x": listing{deps: []DependentObjectReference{cm("one")}, hooks: onA},
			"y": listing{err: errors.New("boom"), hooks: onA},
		}, gvk: a, hooked: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := NewDependencyUnion()
			u.Set("removed", listing{deps: []DependentObjectReference{cm("removed")}, hooks: onA})
			for n, i := range tc.members {
				u.Set(n, i)
			}
			u.Set("removed", nil)
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(tc.gvk)
			if got := u.HookEnabled(tc.gvk, InterpretDependency); got != tc.hooked {
				t.Errorf("HookEnabled = %v, want %v", got, tc.hooked)
			}
			if u.HookEnabled(tc.gvk, InterpretReplica) {
				t.Error("a dependency union hooks InterpretReplica")
			}
			// First in a chain, before a customization answering alone.
			chain := Chain{u, listing{deps: []DependentObjectReference{cm("fallback")}, hooks: map[schema.GroupVersionKind]bool{a: true, b: true}}}
			got, err := chain.GetDependencies(obj)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			want := tc.want
			if !tc.hooked {
				want = []DependentObjectReference{cm("fallback")}
			}
			if !tc.wantErr && !reflect.DeepEqual(got, want) {
				t.Errorf("GetDependencies = %+v, want %+v", got, want)
			}
		})
	}
}
