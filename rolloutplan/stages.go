package rolloutplan

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// Cluster is a cluster of the placement, as a stage selects it.
type Cluster struct {
	Name   string
	Labels map[string]string
}

// Assign places each cluster of the placement in a stage: the stage that
// names it, else the first whose selector matches it. Within a stage the
// clusters are in the order of the stage's orderByLabel value (those
// without the label last), then by name. unstaged are the clusters no stage
// holds, by name; a stage with a bad selector selects by name only.
func Assign(stages []flotillav1alpha1.RolloutStage, clusters []Cluster) (assigned [][]Cluster, unstaged []string) {
	assigned = make([][]Cluster, len(stages))
	named := map[string]int{}
	for i, st := range stages {
		for _, n := range st.Clusters.Names {
			if _, ok := named[n]; !ok {
				named[n] = i
			}
		}
	}
	selectors := make([]labels.Selector, len(stages))
	for i, st := range stages {
		if st.Clusters.LabelSelector != nil {
			if s, err := metav1.LabelSelectorAsSelector(st.Clusters.LabelSelector); err == nil {
				selectors[i] = s
			}
		}
	}
	for _, c := range clusters {
		if i, ok := named[c.Name]; ok {
			assigned[i] = append(assigned[i], c)
			continue
		}
		placed := false
		for i, s := range selectors {
			if s != nil && s.Matches(labels.Set(c.Labels)) {
				assigned[i] = append(assigned[i], c)
				placed = true
				break
			}
		}
		if !placed {
			unstaged = append(unstaged, c.Name)
		}
	}
	for i, st := range stages {
		key := st.Clusters.OrderByLabel
		slices.SortFunc(assigned[i], func(a, b Cluster) int {
			if key != "" {
				av, aok := a.Labels[key]
				bv, bok := b.Labels[key]
				if aok != bok {
					if aok {
						return -1
					}
					return 1
				}
				if c := cmp.Compare(av, bv); c != 0 {
					return c
				}
			}
			return cmp.Compare(a.Name, b.Name)
		})
	}
	slices.Sort(unstaged)
	return assigned, unstaged
}

// concurrency is how many of n clusters a stage updates at once: a number,
// or a percentage of n rounded up; at least 1.
func concurrency(c *intstr.IntOrString, n int) int {
	if c == nil {
		return max(n, 1)
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(c, n, true)
	if err != nil || v < 1 {
		return 1
	}
	return v
}
