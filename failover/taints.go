package failover

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Eviction is a binding leaving one of its clusters.
type Eviction struct {
	Cluster string
	// Replicas were assigned to the cluster.
	Replicas int32
	// Message says why, for the task and the event.
	Message string
}

// NoExecuteEvictions returns the target clusters a binding leaves now
// because of their NoExecute taints, as Karmada's taint manager decides:
// a cluster with a NoExecute taint none of the tolerations tolerates is
// left at once; one whose every NoExecute taint is tolerated is left when
// the shortest tolerationSeconds of the tolerations used has passed since
// the taints were added (the earliest timeAdded), never when none of them
// has tolerationSeconds. after is how long until the next cluster is due
// (0: none is). Clusters not in clusters (deleted) are not decided here.
func NoExecuteEvictions(targets []workv1alpha2.TargetCluster, tolerations []corev1.Toleration, clusters map[string]*clusterv1alpha1.Cluster, now time.Time) (evict []Eviction, after time.Duration) {
	for _, tc := range targets {
		c, ok := clusters[tc.Name]
		if !ok {
			continue
		}
		taints := NoExecuteTaints(c)
		if len(taints) == 0 {
			continue
		}
		used, untolerated := matching(taints, tolerations)
		if untolerated != nil {
			evict = append(evict, Eviction{Cluster: tc.Name, Replicas: tc.Replicas,
				Message: fmt.Sprintf("cluster %s has the NoExecute taint %s, which the placement does not tolerate", tc.Name, taintString(untolerated))})
			continue
		}
		seconds, limited := minTolerationSeconds(used)
		if !limited {
			continue
		}
		due := earliestAdded(taints, now).Add(time.Duration(seconds) * time.Second)
		if !now.Before(due) {
			evict = append(evict, Eviction{Cluster: tc.Name, Replicas: tc.Replicas,
				Message: fmt.Sprintf("cluster %s has had the NoExecute taint %s longer than the %ds the placement tolerates", tc.Name, taintStrings(taints), seconds)})
			continue
		}
		if wait := due.Sub(now); after == 0 || wait < after {
			after = wait
		}
	}
	return evict, after
}

// NoExecuteTaints are the cluster's taints of effect NoExecute.
func NoExecuteTaints(c *clusterv1alpha1.Cluster) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range c.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// matching returns the tolerations that tolerate some taint, or the first
// taint none tolerates.
func matching(taints []corev1.Taint, tolerations []corev1.Toleration) ([]corev1.Toleration, *corev1.Taint) {
	var used []corev1.Toleration
	for i := range taints {
		t := &taints[i]
		found := false
		for _, tol := range tolerations {
			if tol.ToleratesTaint(klog.Background(), t, false) {
				found = true
				used = append(used, tol)
			}
		}
		if !found {
			return nil, t
		}
	}
	return used, nil
}

// minTolerationSeconds is the shortest tolerationSeconds of used (a
// negative one counts as 0); limited is false when none has one.
func minTolerationSeconds(used []corev1.Toleration) (seconds int64, limited bool) {
	for _, tol := range used {
		if tol.TolerationSeconds == nil {
			continue
		}
		s := max(*tol.TolerationSeconds, 0)
		if !limited || s < seconds {
			seconds, limited = s, true
		}
	}
	return seconds, limited
}

// earliestAdded is when the first of taints was added (now for taints
// without timeAdded: the API server sets it on NoExecute taints).
func earliestAdded(taints []corev1.Taint, now time.Time) time.Time {
	first := now
	for _, t := range taints {
		if t.TimeAdded != nil && t.TimeAdded.Time.Before(first) {
			first = t.TimeAdded.Time
		}
	}
	return first
}

func taintString(t *corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

func taintStrings(taints []corev1.Taint) string {
	out := make([]string, len(taints))
	for i := range taints {
		out[i] = taintString(&taints[i])
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}
