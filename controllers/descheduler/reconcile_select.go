package descheduler

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/failover"
)

// candidate tells whether rb may be descheduled: a Deployment's binding (Karmada's
// descheduler supports that kind only) whose applied placement divides
// replicas dynamically, scheduled at its current generation (a decision
// pending would be made on replicas about to change), with replicas
// assigned, not being deleted, and without an open GracefulEvictionTask
// (a failover is already moving its replicas).
func candidate(rb *workv1alpha2.ResourceBinding) bool {
	r := rb.Spec.Resource
	if rb.DeletionTimestamp != nil || r.APIVersion != appsv1.SchemeGroupVersion.String() || r.Kind != "Deployment" ||
		rb.Spec.Replicas <= 0 || len(rb.Spec.Clusters) == 0 || len(rb.Spec.GracefulEvictionTasks) > 0 ||
		rb.Status.SchedulerObservedGeneration != rb.Generation {
		return false
	}
	applied, ok := rb.Annotations[workv1alpha2.AppliedPlacementAnnotation]
	if !ok {
		return false
	}
	p := &policyv1alpha1.Placement{}
	return json.Unmarshal([]byte(applied), p) == nil && failover.DynamicallyDivided(p)
}

// lacking returns the clusters of rb whose aggregated status says fewer
// replicas are Ready than assigned (or says nothing), with the Ready
// replicas it says (Karmada's "undesired clusters"): only those can have
// replicas to take off.
func lacking(rb *workv1alpha2.ResourceBinding) map[string]int32 {
	ready := map[string]int32{}
	for _, item := range rb.Status.AggregatedStatus {
		if n, ok := readyReplicas(item); ok {
			ready[item.ClusterName] = n
		}
	}
	out := map[string]int32{}
	for _, t := range rb.Spec.Clusters {
		if n := ready[t.Name]; t.Replicas > 0 && n < t.Replicas {
			out[t.Name] = n
		}
	}
	return out
}

// readyReplicas reads status.readyReplicas of the workload in one
// cluster, as reflected in the binding's aggregated status.
func readyReplicas(item workv1alpha2.AggregatedStatusItem) (int32, bool) {
	if item.Status == nil || len(item.Status.Raw) == 0 {
		return 0, false
	}
	var s struct {
		ReadyReplicas *int32 `json:"readyReplicas"`
	}
	if err := json.Unmarshal(item.Status.Raw, &s); err != nil || s.ReadyReplicas == nil {
		return 0, false
	}
	return *s.ReadyReplicas, true
}
