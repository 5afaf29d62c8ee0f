package detector

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/selectors"
)

// policy is a PropagationPolicy or ClusterPropagationPolicy, as choosing
// sees it (selectors.ChoosePolicy, which flotilla-apiserver's dry-runs share).
type policy = selectors.Policy

func fromPP(pp *policyv1alpha1.PropagationPolicy) *policy { return selectors.FromPP(pp) }

func fromCPP(cpp *policyv1alpha1.ClusterPropagationPolicy) *policy { return selectors.FromCPP(cpp) }

// claim is who claims a template now, read from its metadata.
type claim struct {
	Cluster         bool
	Namespace, Name string
	ID              string
}

// claimOf reads the complete claim of a template, if any.
func claimOf(obj *unstructured.Unstructured) (claim, bool) {
	l, a := obj.GetLabels(), obj.GetAnnotations()
	if id := l[policyv1alpha1.PropagationPolicyPermanentIDLabel]; id != "" {
		ns, name := a[policyv1alpha1.PropagationPolicyNamespaceAnnotation], a[policyv1alpha1.PropagationPolicyNameAnnotation]
		if ns != "" && name != "" {
			return claim{Namespace: ns, Name: name, ID: id}, true
		}
	}
	if id := l[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]; id != "" {
		if name := a[policyv1alpha1.ClusterPropagationPolicyAnnotation]; name != "" {
			return claim{Cluster: true, Name: name, ID: id}, true
		}
	}
	return claim{}, false
}

// choose picks the policy that should claim obj (selectors.ChoosePolicy).
func choose(pps, cpps []*policy, obj *unstructured.Unstructured, current *policy) (*policy, bool) {
	return selectors.ChoosePolicy(pps, cpps, obj, current)
}
