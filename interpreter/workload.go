package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/selectors"
)

// Workload is how i reads the templates of kind gvk for their bindings:
// their components when components is set (several pod templates are
// scheduled as a whole) and the kind has that hook, else their replicas
// when it has that one. The PriorityClass reader is left to the caller.
func Workload(i Interpreter, gvk schema.GroupVersionKind, components bool) selectors.Workload {
	var w selectors.Workload
	switch {
	case i == nil:
	case components && i.HookEnabled(gvk, InterpretComponent):
		w.Components = func(obj *unstructured.Unstructured) ([]workv1alpha2.Component, bool, error) {
			comps, err := i.GetComponents(obj)
			return comps, true, err
		}
	case i.HookEnabled(gvk, InterpretReplica):
		w.Replicas = func(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, bool, error) {
			replicas, req, err := i.GetReplicas(obj)
			return replicas, req, true, err
		}
	}
	return w
}
