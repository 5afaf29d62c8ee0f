package rollout

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// health is how a cluster told to run revision does: Healthy once its Work
// is built from that revision, applied at the Work's generation and its
// workload healthy as the interpreter says (InterpretHealth, which for a
// Deployment also waits for the observed generation and the new replicas);
// Unhealthy when the apply failed or the cluster is not Ready; Updating
// otherwise. A kind the interpreter has no health for (Unknown) is healthy
// once applied. work is nil when the cluster has no Work yet.
func health(cluster *clusterv1alpha1.Cluster, work *workv1alpha1.Work, revision string) (flotillav1alpha1.ClusterHealth, string) {
	if cluster == nil || !ready(cluster) {
		return flotillav1alpha1.ClusterUnhealthy, "cluster is not ready"
	}
	if work == nil {
		return flotillav1alpha1.ClusterUpdating, "no Work yet"
	}
	if work.Annotations[flotillav1alpha1.RevisionAnnotation] != revision {
		return flotillav1alpha1.ClusterUpdating, "Work not at the revision yet"
	}
	applied := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkApplied)
	switch {
	case applied == nil || applied.ObservedGeneration != work.Generation:
		return flotillav1alpha1.ClusterUpdating, "not applied yet"
	case applied.Status != metav1.ConditionTrue:
		return flotillav1alpha1.ClusterUnhealthy, "apply failed: " + applied.Message
	}
	if len(work.Status.ManifestStatuses) == 0 {
		return flotillav1alpha1.ClusterUpdating, "no status collected yet"
	}
	for _, m := range work.Status.ManifestStatuses {
		switch m.Health {
		case workv1alpha1.ResourceHealthy:
		case workv1alpha1.ResourceUnhealthy:
			return flotillav1alpha1.ClusterUpdating, "workload not healthy"
		default:
			// Unknown: the interpreter has no health for the kind (a
			// ConfigMap, a Service without load balancer...): applied is
			// all there is to wait for.
		}
	}
	return flotillav1alpha1.ClusterHealthy, ""
}
