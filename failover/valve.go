package failover

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Partitioned tells whether evictions must pause: more than share (0-1) of
// the clusters are not Ready. When most members fail at once, the likelier
// cause is the control plane's own network, and moving every workload to
// the few clusters left (or nowhere) would do more harm than waiting. why
// says so, for the event and the condition.
func Partitioned(clusters []*clusterv1alpha1.Cluster, share float64) (paused bool, why string) {
	if len(clusters) == 0 {
		return false, ""
	}
	notReady := 0
	for _, c := range clusters {
		if !meta.IsStatusConditionPresentAndEqual(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady, metav1.ConditionTrue) {
			notReady++
		}
	}
	if float64(notReady) <= share*float64(len(clusters)) {
		return false, ""
	}
	return true, fmt.Sprintf("%d of %d clusters are not Ready, more than %.0f%%: evictions pause until fewer are (a partition of the control plane looks like every member failing)",
		notReady, len(clusters), share*100)
}

// Settling returns how long an eviction from cluster c must still wait
// (0: none) because c is not Ready and became so less than window ago.
// When the control plane loses its network, the members go not Ready one
// by one as their probes fail, seconds apart: deciding on the first one
// alone, before the others show, would evict from it what Partitioned
// would then keep everywhere else. Waiting window lets them show. A
// cluster that is Ready (tainted by hand, say) is not held; one without a
// Ready condition (never probed) is, as no one knows since when.
func Settling(c *clusterv1alpha1.Cluster, window time.Duration, now time.Time) time.Duration {
	cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if cond != nil && cond.Status == metav1.ConditionTrue {
		return 0
	}
	since := now
	if cond != nil && !cond.LastTransitionTime.IsZero() {
		since = cond.LastTransitionTime.Time
	}
	if left := since.Add(window).Sub(now); left > 0 {
		return left
	}
	return 0
}
