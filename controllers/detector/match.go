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

// claimOf reads the complete claim of a template, if any (selectors.ClaimOf).
func claimOf(obj *unstructured.Unstructured) (selectors.Claim, bool) {
	return selectors.ClaimOf(obj.GetLabels(), obj.GetAnnotations())
}

// choose picks the policy that should claim obj (selectors.ChoosePolicy).
func choose(pps, cpps []*policy, obj *unstructured.Unstructured, current *policy) (*policy, bool) {
	return selectors.ChoosePolicy(pps, cpps, obj, current)
}
