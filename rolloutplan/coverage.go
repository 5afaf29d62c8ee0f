package rolloutplan

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// Coverage says what is wrong with the stages of a strategy over the
// registered clusters: the stages that select none of them, and the
// clusters no stage names that the selectors of several stages match (a
// cluster goes to the first; a name always wins, so a canary named in one
// stage and matched by a later "everything else" selector is fine). It
// returns "" when nothing is.
func Coverage(stages []flotillav1alpha1.RolloutStage, clusters []Cluster) string {
	clusters = slices.Clone(clusters)
	slices.SortFunc(clusters, func(a, b Cluster) int { return strings.Compare(a.Name, b.Name) })
	selectedBy := map[string][]string{}
	// namedIn is the first stage naming each cluster: it goes there
	// whatever the selectors say (Assign).
	namedIn := map[string]string{}
	var empty []string
	for _, st := range stages {
		var sel labels.Selector
		if st.Clusters.LabelSelector != nil {
			if s, err := metav1.LabelSelectorAsSelector(st.Clusters.LabelSelector); err == nil {
				sel = s
			}
		}
		selects := false
		for _, c := range clusters {
			named := false
			for _, n := range st.Clusters.Names {
				if n == c.Name {
					named = true
					break
				}
			}
			if _, seen := namedIn[c.Name]; named && !seen {
				namedIn[c.Name] = st.Name
			}
			if named || (sel != nil && sel.Matches(labels.Set(c.Labels))) {
				selects = true
				selectedBy[c.Name] = append(selectedBy[c.Name], st.Name)
			}
		}
		if !selects {
			empty = append(empty, st.Name)
		}
	}
	var problems []string
	if len(empty) > 0 {
		problems = append(problems, fmt.Sprintf("stages %s select no cluster", strings.Join(empty, ", ")))
	}
	for _, c := range clusters {
		if _, named := namedIn[c.Name]; named {
			continue
		}
		if by := selectedBy[c.Name]; len(by) > 1 {
			problems = append(problems, fmt.Sprintf("cluster %s is selected by stages %s (it goes to %s)", c.Name, strings.Join(by, ", "), by[0]))
		}
	}
	return strings.Join(problems, "; ")
}
