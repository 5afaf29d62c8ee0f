package interpreter

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Operation is an interpreter operation. The values match Karmada's
// InterpreterOperation names.
type Operation string

// The interpreter operations.
const (
	// InterpretReplica reads the replicas and per-replica requirements.
	InterpretReplica Operation = "InterpretReplica"
	// InterpretComponent reads the components (pod templates) of a workload.
	InterpretComponent Operation = "InterpretComponent"
	// ReviseReplica sets the replicas of an object.
	ReviseReplica Operation = "ReviseReplica"
	// Retain keeps member-owned fields of the observed object in the desired one.
	Retain Operation = "Retain"
	// AggregateStatus writes the member statuses back to the template.
	AggregateStatus Operation = "AggregateStatus"
	// InterpretStatus reflects the status of a member object.
	InterpretStatus Operation = "InterpretStatus"
	// InterpretHealth tells whether a member object is healthy.
	InterpretHealth Operation = "InterpretHealth"
	// InterpretDependency lists the objects an object depends on.
	InterpretDependency Operation = "InterpretDependency"
	// Prune removes irrelevant fields from a manifest.
	Prune Operation = "Prune"
)

// DependentObjectReference names an object another object depends on. Either
// Name or LabelSelector is set.
type DependentObjectReference struct {
	// APIVersion is the API version of the referent.
	APIVersion string `json:"apiVersion"`
	// Kind is the kind of the referent.
	Kind string `json:"kind"`
	// Namespace is the namespace of the referent; empty for cluster-scoped kinds.
	Namespace string `json:"namespace,omitempty"`
	// Name is the name of the referent.
	Name string `json:"name,omitempty"`
	// LabelSelector selects the referents when Name is empty.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Interpreter interprets resources of the kinds it has hooks for. Callers
// must check HookEnabled before calling an operation; an operation called for
// a kind without a hook returns an error (or, for InterpretStatus and
// InterpretHealth, the "nothing to say" value).
//
// Implementations never modify their arguments. A returned object may share
// the parts the operation did not change with its argument: callers treat
// results as read-only, or copy them (as the binding and execution
// controllers do before revising and retaining).
type Interpreter interface {
	// HookEnabled tells whether the interpreter implements operation for gvk.
	HookEnabled(gvk schema.GroupVersionKind, operation Operation) bool
	// GetReplicas returns the desired replicas of obj and what each replica
	// requires; req is nil when there is nothing to require.
	GetReplicas(obj *unstructured.Unstructured) (replicas int32, req *workv1alpha2.ReplicaRequirements, err error)
	// GetComponents returns the components (pod templates) of a workload
	// made of several, each with its replicas and requirements.
	GetComponents(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error)
	// ReviseReplica returns a copy of obj with its replicas set to replicas.
	ReviseReplica(obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error)
	// Retain returns a copy of desired that keeps the member-owned fields of observed.
	Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// AggregateStatus returns a copy of obj whose status aggregates items.
	AggregateStatus(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error)
	// ReflectStatus returns the part of obj's status to report; nil when there is nothing to report.
	ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error)
	// InterpretHealth tells the health of the member object obj.
	InterpretHealth(obj *unstructured.Unstructured) (workv1alpha2.ResourceHealth, error)
	// GetDependencies lists the objects obj depends on.
	GetDependencies(obj *unstructured.Unstructured) ([]DependentObjectReference, error)
}
