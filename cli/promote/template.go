package promote

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/cli/policy"
)

// Template returns the resource template of member, an object read from a
// member cluster: what the member's API server and controllers set is
// pruned as Flotilla prunes the manifests it applies (uid,
// resourceVersion, generation, creationTimestamp, managedFields, owner
// references, finalizers, status, and the per-kind fields of
// mutation.PruneManifest), and work.karmada.io/conflict-resolution is
// set to overwrite unless the object has its own value, as karmadactl
// does, so that Flotilla takes the member object over.
func Template(member *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t := member.DeepCopy()
	if err := mutation.PruneManifest(t); err != nil {
		return nil, fmt.Errorf("pruning %s %s: %w", t.GetKind(), t.GetName(), err)
	}
	annotations := t.GetAnnotations()
	if _, ok := annotations[workv1alpha2.ResourceConflictResolutionAnnotation]; !ok {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[workv1alpha2.ResourceConflictResolutionAnnotation] = workv1alpha2.ResourceConflictResolutionOverwrite
		t.SetAnnotations(annotations)
	}
	return t, nil
}

// Item is one object promote creates in the control plane.
type Item struct {
	// Template is the resource template.
	Template *unstructured.Unstructured
	// Policy places the template on the member; nil for a dependency,
	// which its workload's policy propagates (propagateDeps).
	Policy runtime.Object
}

// Plan returns what promoting obj from cluster creates, in order: the
// templates of its dependencies deps, then obj's template and its policy
// placing it on cluster, with propagateDeps when withDeps (karmadactl
// promote -d), so that the dependencies follow it there. A cluster-scoped
// object (no namespace) gets a ClusterPropagationPolicy.
func Plan(obj *unstructured.Unstructured, deps []*unstructured.Unstructured, cluster string, withDeps bool) ([]Item, error) {
	items := make([]Item, 0, len(deps)+1)
	for _, d := range deps {
		t, err := Template(d)
		if err != nil {
			return nil, err
		}
		items = append(items, Item{Template: t})
	}
	t, err := Template(obj)
	if err != nil {
		return nil, err
	}
	p := policy.For(policy.Target{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), Namespaced: obj.GetNamespace() != ""}, []string{cluster})
	if withDeps {
		switch p := p.(type) {
		case *policyv1alpha1.PropagationPolicy:
			p.Spec.PropagateDeps = true
		case *policyv1alpha1.ClusterPropagationPolicy:
			p.Spec.PropagateDeps = true
		}
	}
	return append(items, Item{Template: t, Policy: p}), nil
}
