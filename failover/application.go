package failover

import (
	"encoding/json"
	"fmt"
	"time"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// DefaultApplicationToleration is failover.application's
// decisionConditions.tolerationSeconds when unset (Karmada's 300).
const DefaultApplicationToleration = 300 * time.Second

// ApplicationEvictions returns the target clusters where the workload has
// been Unhealthy (its aggregated status says so) for toleration or longer,
// as Karmada's application failover decides. since holds when each
// cluster was first seen Unhealthy; the returned map is its next value
// (clusters healthy or unknown again are forgotten, so a workload that
// recovers starts afresh). after is when the next cluster is due (0: none).
func ApplicationEvictions(targets []workv1alpha2.TargetCluster, status []workv1alpha2.AggregatedStatusItem, since map[string]time.Time,
	toleration time.Duration, now time.Time) (evict []Eviction, next map[string]time.Time, after time.Duration) {
	health := make(map[string]workv1alpha2.ResourceHealth, len(status))
	for _, s := range status {
		health[s.ClusterName] = s.Health
	}
	next = map[string]time.Time{}
	for _, tc := range targets {
		if health[tc.Name] != workv1alpha2.ResourceUnhealthy {
			continue
		}
		first, ok := since[tc.Name]
		if !ok {
			first = now
		}
		next[tc.Name] = first
		due := first.Add(toleration)
		if !now.Before(due) {
			evict = append(evict, Eviction{Cluster: tc.Name, Replicas: tc.Replicas,
				Message: fmt.Sprintf("the application has been unhealthy in cluster %s for %s, longer than the %s the policy tolerates", tc.Name, now.Sub(first).Round(time.Second), toleration)})
			continue
		}
		if wait := due.Sub(now); after == 0 || wait < after {
			after = wait
		}
	}
	return evict, next, after
}

// ParseUnhealthySince reads the value of the unhealthy-since annotation
// (cluster name to RFC 3339 time, JSON); an entry that is not a time is
// left out, and a value that is not such an object reads as none.
func ParseUnhealthySince(v string) map[string]time.Time {
	if v == "" {
		return nil
	}
	var raw map[string]string
	if json.Unmarshal([]byte(v), &raw) != nil {
		return nil
	}
	out := make(map[string]time.Time, len(raw))
	for cluster, ts := range raw {
		if t, err := time.Parse(time.RFC3339, ts); err == nil {
			out[cluster] = t
		}
	}
	return out
}

// FormatUnhealthySince is the annotation's value for since: "" for none,
// otherwise its times in UTC to the second, clusters sorted (a value that
// does not change is not rewritten).
func FormatUnhealthySince(since map[string]time.Time) string {
	if len(since) == 0 {
		return ""
	}
	raw := make(map[string]string, len(since))
	for cluster, t := range since {
		raw[cluster] = t.UTC().Format(time.RFC3339)
	}
	b, _ := json.Marshal(raw) // strings only: never fails; keys sorted
	return string(b)
}

// PreservedLabels returns the labels the workload gets in cluster from the
// eviction tasks that carry preserved state: those of tasks whose
// clustersBeforeFailover do not include cluster (the clusters it moved
// to, not those it already ran in), later tasks winning.
func PreservedLabels(tasks []workv1alpha2.GracefulEvictionTask, cluster string) map[string]string {
	var out map[string]string
	for _, t := range tasks {
		if len(t.PreservedLabelState) == 0 || contains(t.ClustersBeforeFailover, cluster) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		for k, v := range t.PreservedLabelState {
			out[k] = v
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
