package detector

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/selectors"
)

// policy is a PropagationPolicy or ClusterPropagationPolicy, as matching sees it.
type policy struct {
	Cluster   bool // a ClusterPropagationPolicy
	Namespace string
	Name      string
	ID        string // permanent id
	Spec      *policyv1alpha1.PropagationSpec
	// Apply are the policy's apply annotations it has (flotillav1alpha1.ApplyAnnotationsOf).
	Apply map[string]string
}

func (p *policy) priority() int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

func (p *policy) key() string {
	if p.Cluster {
		return "cpp/" + p.Name
	}
	return "pp/" + p.Namespace + "/" + p.Name
}

func fromPP(pp *policyv1alpha1.PropagationPolicy) *policy {
	return &policy{Namespace: pp.Namespace, Name: pp.Name, ID: pp.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel], Spec: &pp.Spec,
		Apply: flotillav1alpha1.ApplyAnnotationsOf(pp.Annotations)}
}

func fromCPP(cpp *policyv1alpha1.ClusterPropagationPolicy) *policy {
	return &policy{Cluster: true, Name: cpp.Name, ID: cpp.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel], Spec: &cpp.Spec,
		Apply: flotillav1alpha1.ApplyAnnotationsOf(cpp.Annotations)}
}

// candidate is a policy that matches a template, with its implicit priority.
type candidate struct {
	*policy
	implicit int
}

// better tells whether a beats b: explicit priority, then implicit priority of
// the best selector match, then the smaller name, as Karmada's detector
// chooses.
func better(a, b candidate) bool {
	if a.priority() != b.priority() {
		return a.priority() > b.priority()
	}
	if a.implicit != b.implicit {
		return a.implicit > b.implicit
	}
	return a.Name < b.Name
}

// best returns the best of the policies matching obj; ok is false when none does.
func best(policies []*policy, obj *unstructured.Unstructured) (candidate, bool) {
	var top candidate
	found := false
	for _, p := range policies {
		sels := p.Spec.ResourceSelectors
		if !p.Cluster {
			// A PropagationPolicy only selects in its own namespace.
			if obj.GetNamespace() != p.Namespace {
				continue
			}
		}
		prio := selectors.BestMatch(sels, obj)
		if prio == selectors.NoMatch {
			continue
		}
		c := candidate{policy: p, implicit: prio}
		if !found || better(c, top) {
			top, found = c, true
		}
	}
	return top, found
}

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

// choose picks the policy that should claim obj: among the namespace's
// PropagationPolicies if any matches, else among the ClusterPropagationPolicies
// (cluster-scoped templates: CPPs only). The current claimer keeps the
// template while it still matches, unless a better candidate preempts it
// (preemption Always: a PP beats any CPP claim and lower-priority PPs; a
// CPP beats lower-priority CPPs).
func choose(pps, cpps []*policy, obj *unstructured.Unstructured, current *policy) (*policy, bool) {
	var top candidate
	var ok bool
	if obj.GetNamespace() != "" {
		top, ok = best(pps, obj)
	}
	if !ok {
		top, ok = best(cpps, obj)
	}
	if current == nil {
		return top.policy, ok
	}
	_, curOK := best([]*policy{current}, obj)
	switch {
	case !curOK:
		// The claimer no longer selects the template.
		return top.policy, ok
	case !ok || top.key() == current.key():
		return current, true
	case top.Spec.Preemption != policyv1alpha1.PreemptAlways:
		// Without preemption a claim is never displaced.
		return current, true
	case !top.Cluster && current.Cluster:
		return top.policy, true
	case top.Cluster == current.Cluster && top.priority() > current.priority():
		return top.policy, true
	}
	return current, true
}

// reservedNamespace tells whether templates in ns are never propagated (as in
// Karmada): Karmada's own namespaces and the skipped kube-* ones.
func reservedNamespace(ns string) bool {
	return ns == names.SystemNamespace || ns == names.SecretNamespace || strings.HasPrefix(ns, names.ExecutionNamespacePrefix) ||
		strings.HasPrefix(ns, "kube-")
}
