package selectors

import (
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// Policy is a PropagationPolicy or ClusterPropagationPolicy as choosing the
// policy of a template sees it.
type Policy struct {
	Cluster   bool // a ClusterPropagationPolicy
	Namespace string
	Name      string
	ID        string // permanent id
	Spec      *policyv1alpha1.PropagationSpec
	// Apply are the policy's apply annotations it has (flotillav1alpha1.ApplyAnnotationsOf).
	Apply map[string]string
}

// Priority is the policy's explicit priority (0 when unset).
func (p *Policy) Priority() int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

// Key names the policy among both kinds.
func (p *Policy) Key() string {
	if p.Cluster {
		return "cpp/" + p.Name
	}
	return "pp/" + p.Namespace + "/" + p.Name
}

// FromPP is a PropagationPolicy as a Policy; it shares pp's spec.
func FromPP(pp *policyv1alpha1.PropagationPolicy) *Policy {
	return &Policy{Namespace: pp.Namespace, Name: pp.Name, ID: pp.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel], Spec: &pp.Spec,
		Apply: flotillav1alpha1.ApplyAnnotationsOf(pp.Annotations)}
}

// FromCPP is a ClusterPropagationPolicy as a Policy; it shares cpp's spec.
func FromCPP(cpp *policyv1alpha1.ClusterPropagationPolicy) *Policy {
	return &Policy{Cluster: true, Name: cpp.Name, ID: cpp.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel], Spec: &cpp.Spec,
		Apply: flotillav1alpha1.ApplyAnnotationsOf(cpp.Annotations)}
}

// candidate is a policy that matches a template, with its implicit priority.
type candidate struct {
	*Policy
	implicit int
}

// better tells whether a beats b: explicit priority, then implicit priority of
// the best selector match, then the smaller name, as Karmada's detector
// chooses.
func better(a, b candidate) bool {
	if a.Priority() != b.Priority() {
		return a.Priority() > b.Priority()
	}
	if a.implicit != b.implicit {
		return a.implicit > b.implicit
	}
	return a.Name < b.Name
}

// best returns the best of the policies matching obj; ok is false when none does.
func best(policies []*Policy, obj Object) (candidate, bool) {
	var top candidate
	found := false
	for _, p := range policies {
		if !p.Cluster && obj.GetNamespace() != p.Namespace {
			// A PropagationPolicy only selects in its own namespace.
			continue
		}
		prio := BestMatch(p.Spec.ResourceSelectors, obj)
		if prio == NoMatch {
			continue
		}
		c := candidate{Policy: p, implicit: prio}
		if !found || better(c, top) {
			top, found = c, true
		}
	}
	return top, found
}

// ChoosePolicy picks the policy that should claim obj: among the namespace's
// PropagationPolicies if any matches, else among the ClusterPropagationPolicies
// (cluster-scoped templates: CPPs only). The current claimer keeps the
// template while it still matches, unless a better candidate preempts it
// (preemption Always: a PP beats any CPP claim and lower-priority PPs; a
// CPP beats lower-priority CPPs). ok is false when no policy claims it.
func ChoosePolicy(pps, cpps []*Policy, obj Object, current *Policy) (*Policy, bool) {
	var top candidate
	var ok bool
	if obj.GetNamespace() != "" {
		top, ok = best(pps, obj)
	}
	if !ok {
		top, ok = best(cpps, obj)
	}
	if current == nil {
		return top.Policy, ok
	}
	_, curOK := best([]*Policy{current}, obj)
	switch {
	case !curOK:
		// The claimer no longer selects the template.
		return top.Policy, ok
	case !ok || top.Key() == current.Key():
		return current, true
	case top.Spec.Preemption != policyv1alpha1.PreemptAlways:
		// Without preemption a claim is never displaced.
		return current, true
	case !top.Cluster && current.Cluster:
		return top.Policy, true
	case top.Cluster == current.Cluster && top.Priority() > current.Priority():
		return top.Policy, true
	}
	return current, true
}

// Selects tells whether p selects obj (in its namespace, for a
// PropagationPolicy).
func (p *Policy) Selects(obj Object) bool {
	_, ok := best([]*Policy{p}, obj)
	return ok
}

// Claim is who claims a template now, read from its metadata: the claim
// labels and annotations the detector writes.
type Claim struct {
	Cluster         bool
	Namespace, Name string
	ID              string
}

// Key names the claiming policy as Policy.Key does.
func (c Claim) Key() string {
	return (&Policy{Cluster: c.Cluster, Namespace: c.Namespace, Name: c.Name}).Key()
}

// ClaimOf reads the complete claim of a template with labels and
// annotations, if any.
func ClaimOf(labels, annotations map[string]string) (Claim, bool) {
	if id := labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]; id != "" {
		ns, name := annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation], annotations[policyv1alpha1.PropagationPolicyNameAnnotation]
		if ns != "" && name != "" {
			return Claim{Namespace: ns, Name: name, ID: id}, true
		}
	}
	if id := labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]; id != "" {
		if name := annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation]; name != "" {
			return Claim{Cluster: true, Name: name, ID: id}, true
		}
	}
	return Claim{}, false
}
