package failover

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Binding is what AssessTask reads of a binding.
type Binding struct {
	Spec   *workv1alpha2.ResourceBindingSpec
	Status *workv1alpha2.ResourceBindingStatus
	// Generation is the binding's metadata.generation.
	Generation int64
}

// Verdict is what becomes of a GracefulEvictionTask.
type Verdict struct {
	// Done: the task goes, and with it the Work in its cluster.
	Done bool
	// Why says why it goes, for the event and the log.
	Why string
	// After is when to look again, if it stays (0: when the binding changes).
	After time.Duration
}

// PurgesAtOnce tells whether a task of mode removes the workload from its
// cluster at once (Immediately, Directly): its Work goes when the task is
// made. The task still stays until the workload is healthy elsewhere (or
// its grace period ends), keeping the scheduler away from the cluster and
// carrying the state preserved for the clusters the workload moves to.
func PurgesAtOnce(mode policyv1alpha1.PurgeMode) bool {
	return mode == policyv1alpha1.PurgeModeImmediately || mode == policyv1alpha1.PurgeModeDirectly
}

// KeepsWork tells whether the Work of task's cluster stays while the task
// is open.
func KeepsWork(task *workv1alpha2.GracefulEvictionTask) bool { return !PurgesAtOnce(task.PurgeMode) }

// AssessTask decides whether task is finished, as Karmada's graceful
// eviction controller does:
//   - suppressDeletion true keeps it (until someone sets it false, which
//     finishes it), and so does purgeMode Never;
//   - otherwise (Immediately and Directly too: their Work went when the
//     task was made) it is finished when the workload is healthy in every
//     cluster it is scheduled to now (applied and Healthy in the
//     aggregated status of the current generation), or when its grace
//     period (gracePeriodSeconds, else timeout) since its creation ends.
func AssessTask(task *workv1alpha2.GracefulEvictionTask, b Binding, timeout time.Duration, now time.Time) Verdict {
	if task.SuppressDeletion != nil {
		if *task.SuppressDeletion {
			return Verdict{}
		}
		return Verdict{Done: true, Why: "suppression of the deletion lifted"}
	}
	if task.PurgeMode == policyv1alpha1.PurgeModeNever {
		return Verdict{}
	}
	grace := timeout
	if task.GracePeriodSeconds != nil {
		grace = time.Duration(*task.GracePeriodSeconds) * time.Second
	}
	created := now
	if task.CreationTimestamp != nil {
		created = task.CreationTimestamp.Time
	}
	if end := created.Add(grace); !now.Before(end) {
		return Verdict{Done: true, Why: fmt.Sprintf("grace period of %s ended", grace)}
	} else if healthyElsewhere(b) {
		return Verdict{Done: true, Why: "the workload is healthy in " + clusterNames(b.Spec.Clusters)}
	} else {
		return Verdict{After: end.Sub(now)}
	}
}

// healthyElsewhere tells whether the workload is applied and healthy in
// every cluster it is scheduled to, as the status of the binding's
// current schedule reports: the scheduler observed the binding's
// generation, and so did the aggregation (its FullyApplied condition),
// so no item is of the clusters or assignments before the eviction.
func healthyElsewhere(b Binding) bool {
	if len(b.Spec.Clusters) == 0 || b.Status.SchedulerObservedGeneration != b.Generation {
		return false
	}
	if cond := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.FullyApplied); cond == nil || cond.ObservedGeneration != b.Generation {
		return false
	}
	byCluster := map[string]workv1alpha2.AggregatedStatusItem{}
	for _, s := range b.Status.AggregatedStatus {
		byCluster[s.ClusterName] = s
	}
	for _, c := range b.Spec.Clusters {
		s, ok := byCluster[c.Name]
		if !ok || !s.Applied || s.Health != workv1alpha2.ResourceHealthy {
			return false
		}
	}
	return true
}

func clusterNames(targets []workv1alpha2.TargetCluster) string {
	out := ""
	for i, t := range targets {
		if i > 0 {
			out += ", "
		}
		out += t.Name
	}
	return out
}
