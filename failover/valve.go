package failover

import (
	"fmt"

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
