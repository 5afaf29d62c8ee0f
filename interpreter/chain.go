package interpreter

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Chain asks its interpreters in order, per operation and kind: the first with
// a hook for them answers (Karmada's order: customizations, then webhooks, then
// the customizations shipped for third-party kinds, then the native built-ins).
// When none has a hook, the last one answers, with its "nothing to say" value
// or its error.
type Chain []Interpreter

var _ Interpreter = Chain(nil)

func (c Chain) pick(gvk schema.GroupVersionKind, op Operation) Interpreter {
	for _, i := range c {
		if i.HookEnabled(gvk, op) {
			return i
		}
	}
	return c[len(c)-1]
}

// HookEnabled implements Interpreter: some interpreter has a hook.
func (c Chain) HookEnabled(gvk schema.GroupVersionKind, op Operation) bool {
	for _, i := range c {
		if i.HookEnabled(gvk, op) {
			return true
		}
	}
	return false
}

// GetReplicas implements Interpreter.
func (c Chain) GetReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	return c.pick(obj.GroupVersionKind(), InterpretReplica).GetReplicas(obj)
}

// GetComponents implements Interpreter.
func (c Chain) GetComponents(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	return c.pick(obj.GroupVersionKind(), InterpretComponent).GetComponents(obj)
}

// ReviseReplica implements Interpreter.
func (c Chain) ReviseReplica(obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	return c.pick(obj.GroupVersionKind(), ReviseReplica).ReviseReplica(obj, replicas)
}

// Retain implements Interpreter.
func (c Chain) Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return c.pick(desired.GroupVersionKind(), Retain).Retain(desired, observed)
}

// AggregateStatus implements Interpreter.
func (c Chain) AggregateStatus(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	return c.pick(obj.GroupVersionKind(), AggregateStatus).AggregateStatus(obj, items)
}

// ReflectStatus implements Interpreter.
func (c Chain) ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	return c.pick(obj.GroupVersionKind(), InterpretStatus).ReflectStatus(obj)
}

// InterpretHealth implements Interpreter.
func (c Chain) InterpretHealth(obj *unstructured.Unstructured) (workv1alpha2.ResourceHealth, error) {
	return c.pick(obj.GroupVersionKind(), InterpretHealth).InterpretHealth(obj)
}

// GetDependencies implements Interpreter.
func (c Chain) GetDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	return c.pick(obj.GroupVersionKind(), InterpretDependency).GetDependencies(obj)
}

// DependencyUnion answers InterpretDependency alone, with the union of the
// dependencies its members list for an object: Karmada lets several
// ResourceInterpreterCustomizations define dependencyInterpretation for one
// kind (the only operation that may repeat) and runs them all. Put first in
// a Chain, it answers for every kind some member has a dependency hook for;
// each member is the dependency hook of one customization, by name.
// Safe for concurrent use.
type DependencyUnion struct {
	mu      sync.RWMutex
	members map[string]Interpreter
	names   []string // sorted: the union lists the members' answers in this order
}

var _ Interpreter = (*DependencyUnion)(nil)

// NewDependencyUnion returns a union without members.
func NewDependencyUnion() *DependencyUnion {
	return &DependencyUnion{members: map[string]Interpreter{}}
}

// Set makes i the member called name; a nil i removes it.
func (u *DependencyUnion) Set(name string, i Interpreter) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if i == nil {
		delete(u.members, name)
	} else {
		u.members[name] = i
	}
	u.names = slices.Sorted(maps.Keys(u.members))
}

// hooked lists the members with a dependency hook for gvk, by name.
func (u *DependencyUnion) hooked(gvk schema.GroupVersionKind) []Interpreter {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var out []Interpreter
	for _, n := range u.names {
		if i := u.members[n]; i.HookEnabled(gvk, InterpretDependency) {
			out = append(out, i)
		}
	}
	return out
}

// HookEnabled implements Interpreter: only InterpretDependency, for the
// kinds a member has a hook for.
func (u *DependencyUnion) HookEnabled(gvk schema.GroupVersionKind, op Operation) bool {
	return op == InterpretDependency && len(u.hooked(gvk)) > 0
}

// GetDependencies implements Interpreter: every member's dependencies, each
// once, in the members' order; the first error fails the whole answer, as
// a missing dependency would otherwise be released.
func (u *DependencyUnion) GetDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	var out []DependentObjectReference
	seen := map[string]bool{}
	for _, i := range u.hooked(obj.GroupVersionKind()) {
		deps, err := i.GetDependencies(obj)
		if err != nil {
			return nil, err
		}
		for _, d := range deps {
			key := strings.Join([]string{d.APIVersion, d.Kind, d.Namespace, d.Name, metav1.FormatLabelSelector(d.LabelSelector)}, "\x00")
			if d.LabelSelector == nil {
				key += "\x00nil"
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// errOnlyDependencies answers the operations a DependencyUnion does not
// hook; a Chain never asks it for them.
func errOnlyDependencies(op Operation) error {
	return fmt.Errorf("%s: a dependency union interprets %s only", op, InterpretDependency)
}

// GetReplicas implements Interpreter; not hooked.
func (u *DependencyUnion) GetReplicas(*unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	return 0, nil, errOnlyDependencies(InterpretReplica)
}

// GetComponents implements Interpreter; not hooked.
func (u *DependencyUnion) GetComponents(*unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	return nil, errOnlyDependencies(InterpretComponent)
}

// ReviseReplica implements Interpreter; not hooked.
func (u *DependencyUnion) ReviseReplica(*unstructured.Unstructured, int64) (*unstructured.Unstructured, error) {
	return nil, errOnlyDependencies(ReviseReplica)
}

// Retain implements Interpreter; not hooked.
func (u *DependencyUnion) Retain(_, _ *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return nil, errOnlyDependencies(Retain)
}

// AggregateStatus implements Interpreter; not hooked.
func (u *DependencyUnion) AggregateStatus(*unstructured.Unstructured, []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	return nil, errOnlyDependencies(AggregateStatus)
}

// ReflectStatus implements Interpreter; not hooked.
func (u *DependencyUnion) ReflectStatus(*unstructured.Unstructured) (*runtime.RawExtension, error) {
	return nil, errOnlyDependencies(InterpretStatus)
}

// InterpretHealth implements Interpreter; not hooked.
func (u *DependencyUnion) InterpretHealth(*unstructured.Unstructured) (workv1alpha2.ResourceHealth, error) {
	return "", errOnlyDependencies(InterpretHealth)
}
