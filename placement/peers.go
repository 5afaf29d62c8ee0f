package placement

import (
	"iter"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Peers returns the clusters the workload affinity peers of binding name
// (groups g) run on, among the bindings of its namespace: those of its
// affinity group (nil when none runs yet: the first member is not held
// back) and of its anti-affinity group (Input.Affinity, AntiAffinity).
func Peers(name string, g *workv1alpha2.WorkloadAffinityGroups, bindings iter.Seq[*workv1alpha2.ResourceBinding]) (affinity, antiAffinity map[string]bool) {
	if g == nil {
		return nil, nil
	}
	for b := range bindings {
		pg := b.Spec.WorkloadAffinityGroups
		if b.Name == name || pg == nil || len(b.Spec.Clusters) == 0 {
			continue
		}
		for _, tc := range b.Spec.Clusters {
			if g.AffinityGroup != "" && pg.AffinityGroup == g.AffinityGroup {
				if affinity == nil {
					affinity = map[string]bool{}
				}
				affinity[tc.Name] = true
			}
			if g.AntiAffinityGroup != "" && pg.AntiAffinityGroup == g.AntiAffinityGroup {
				if antiAffinity == nil {
					antiAffinity = map[string]bool{}
				}
				antiAffinity[tc.Name] = true
			}
		}
	}
	return affinity, antiAffinity
}
