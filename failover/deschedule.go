package failover

import (
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// DynamicallyDivided tells whether placement divides replicas by what the
// clusters can run: Divided with replicaDivisionPreference Aggregated, or
// Weighted with a weightPreference.dynamicWeight. Only such bindings are
// descheduled (Karmada's IsReplicaDynamicDivided): the scheduler's
// scale-up then places the replicas taken off a cluster where there is
// room. A Duplicated placement or a static weight says how many replicas
// each cluster runs, whatever the clusters can run, and is left alone.
func DynamicallyDivided(p *policyv1alpha1.Placement) bool {
	if p == nil || p.ReplicaScheduling == nil || p.ReplicaScheduling.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided {
		return false
	}
	// As the scheduler reads it: a preference left empty (policies are
	// defaulted to Weighted) weighs as Weighted does.
	rs := p.ReplicaScheduling
	if rs.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated {
		return true
	}
	return rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != ""
}

// Measurement is what was measured of a workload in one of its clusters.
type Measurement struct {
	// Unschedulable are its replicas the member's scheduler has found no
	// node for (PodScheduled False, reason Unschedulable) for longer than
	// the descheduler's threshold.
	Unschedulable int32
	// Ready are its replicas Ready there.
	Ready int32
}

// Descheduled is one cluster whose replicas were lowered.
type Descheduled struct {
	Cluster  string
	From, To int32
}

// Deschedule lowers each measured cluster of targets (a binding's
// spec.clusters) by its unschedulable replicas, as Karmada's descheduler
// does, so that the scheduler's scale-up places them where there is room.
// A cluster is never lowered below the replicas Ready there: what runs is
// never taken away, so a cluster lowers at most by the replicas it lacks
// (assigned minus Ready), whatever was counted unschedulable. Clusters
// missing from measured (not Ready, or their measurement failed) keep
// their replicas. It returns the new clusters, in the same order, and what
// it lowered; nil and nil when nothing is lowered.
func Deschedule(targets []workv1alpha2.TargetCluster, measured map[string]Measurement) ([]workv1alpha2.TargetCluster, []Descheduled) {
	var out []workv1alpha2.TargetCluster
	var lowered []Descheduled
	for i, t := range targets {
		m, ok := measured[t.Name]
		if !ok || m.Unschedulable <= 0 || m.Ready >= t.Replicas {
			continue
		}
		by := min(m.Unschedulable, t.Replicas-max(m.Ready, 0))
		if out == nil {
			out = append([]workv1alpha2.TargetCluster(nil), targets...)
		}
		out[i].Replicas = t.Replicas - by
		lowered = append(lowered, Descheduled{Cluster: t.Name, From: t.Replicas, To: out[i].Replicas})
	}
	return out, lowered
}
