package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Chain asks its interpreters in order, per operation and kind: the first
// with a hook for them answers (API-SPEC §5.2: customizations, then
// webhooks, then the customizations shipped for third-party kinds, then
// the native built-ins). When none has a hook, the last
// one answers, with its "nothing to say" value or its error.
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
