package selectors

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Workload reads from a template what its binding asks of the scheduler:
// the interpreter's hooks, as the detector and dry-run placement ask them.
type Workload struct {
	// Components reads the components of a workload of several pod
	// templates; ok is false when the template is not read that way (nil:
	// none is).
	Components func(obj *unstructured.Unstructured) (comps []workv1alpha2.Component, ok bool, err error)
	// Replicas reads the template's replicas and per-replica
	// requirements; ok is false when its kind has none (nil: none has).
	Replicas func(obj *unstructured.Unstructured) (replicas int32, req *workv1alpha2.ReplicaRequirements, ok bool, err error)
	// PriorityClass is the value of a PriorityClass of the control plane.
	PriorityClass func(name string) (int32, error)
}

// ComponentsError is a failure of the interpreter's GetComponents.
type ComponentsError struct{ Err error }

func (e *ComponentsError) Error() string { return e.Err.Error() }
func (e *ComponentsError) Unwrap() error { return e.Err }

// ReplicasError is a failure of the interpreter's GetReplicas.
type ReplicasError struct{ Err error }

func (e *ReplicasError) Error() string { return e.Err.Error() }
func (e *ReplicasError) Unwrap() error { return e.Err }

// BindingSpec builds the binding spec of obj under policy p: what the
// binding takes from the policy and from the interpreter (docs/compatibility.md,
// Which policy claims a template). existing is the binding's spec when it
// exists (its scheduling suspension is kept). The scheduler's clusters are
// not set.
func BindingSpec(obj *unstructured.Unstructured, p *Policy, existing *workv1alpha2.ResourceBindingSpec, w Workload) (*workv1alpha2.ResourceBindingSpec, error) {
	spec := &workv1alpha2.ResourceBindingSpec{
		Resource: workv1alpha2.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
			Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()},
		PropagateDeps:               p.Spec.PropagateDeps || p.Spec.Association,
		Placement:                   p.Spec.Placement.DeepCopy(),
		SchedulerName:               p.Spec.SchedulerName,
		Failover:                    p.Spec.Failover.DeepCopy(),
		ConflictResolution:          ConflictResolution(obj, p),
		PreserveResourcesOnDeletion: p.Spec.PreserveResourcesOnDeletion,
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = policyv1alpha1.DefaultSchedulerName
	}
	spec.WorkloadAffinityGroups = AffinityGroups(p.Spec.Placement.WorkloadAffinity, obj.GetLabels())
	if sp := p.Spec.SchedulePriority; sp != nil && sp.PriorityClassSource == policyv1alpha1.KubePriorityClass {
		if w.PriorityClass == nil {
			return nil, fmt.Errorf("schedulePriority: no PriorityClasses to read %q from", sp.PriorityClassName)
		}
		v, err := w.PriorityClass(sp.PriorityClassName)
		if err != nil {
			return nil, fmt.Errorf("schedulePriority: %w", err)
		}
		spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: v}
	}
	if s := p.Spec.Suspension; s != nil || (existing != nil && existing.Suspension != nil && existing.Suspension.Scheduling != nil) {
		spec.Suspension = &workv1alpha2.Suspension{}
		if s != nil {
			spec.Suspension.Suspension = *s.DeepCopy()
		}
		if existing != nil && existing.Suspension != nil {
			spec.Suspension.Scheduling = existing.Suspension.Scheduling
		}
	}
	// A workload of several pod templates is described by its components
	// alone, and scheduled as a whole; as in Karmada, GetReplicas is then
	// not asked.
	if w.Components != nil {
		comps, ok, err := w.Components(obj)
		if err != nil {
			return nil, &ComponentsError{fmt.Errorf("reading the components of %s %s: %w", obj.GetKind(), obj.GetName(), err)}
		}
		if ok {
			if len(comps) > 0 {
				spec.Components = comps
			}
			return spec, nil
		}
	}
	if w.Replicas != nil {
		replicas, req, ok, err := w.Replicas(obj)
		if err != nil {
			return nil, &ReplicasError{fmt.Errorf("reading the replicas of %s %s: %w", obj.GetKind(), obj.GetName(), err)}
		}
		if ok {
			spec.Replicas, spec.ReplicaRequirements = replicas, req
		}
	}
	return spec, nil
}

// AffinityGroups names the workload affinity groups of a template:
// "<groupByLabelKey>=<the template's value>", as Karmada names them; a template
// without the label is in no group.
func AffinityGroups(wa *policyv1alpha1.WorkloadAffinity, lbls map[string]string) *workv1alpha2.WorkloadAffinityGroups {
	if wa == nil {
		return nil
	}
	g := &workv1alpha2.WorkloadAffinityGroups{}
	if wa.Affinity != nil {
		if v, ok := lbls[wa.Affinity.GroupByLabelKey]; ok {
			g.AffinityGroup = wa.Affinity.GroupByLabelKey + "=" + v
		}
	}
	if wa.AntiAffinity != nil {
		if v, ok := lbls[wa.AntiAffinity.GroupByLabelKey]; ok {
			g.AntiAffinityGroup = wa.AntiAffinity.GroupByLabelKey + "=" + v
		}
	}
	if *g == (workv1alpha2.WorkloadAffinityGroups{}) {
		return nil
	}
	return g
}

// ConflictResolution is the policy's (Abort when unset), unless the template's
// work.karmada.io/conflict-resolution annotation says overwrite or abort; other
// values are ignored, as in Karmada.
func ConflictResolution(obj *unstructured.Unstructured, p *Policy) policyv1alpha1.ConflictResolution {
	switch obj.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation] {
	case workv1alpha2.ResourceConflictResolutionOverwrite:
		return policyv1alpha1.ConflictOverwrite
	case workv1alpha2.ResourceConflictResolutionAbort:
		return policyv1alpha1.ConflictAbort
	}
	if p.Spec.ConflictResolution == "" {
		return policyv1alpha1.ConflictAbort
	}
	return p.Spec.ConflictResolution
}
