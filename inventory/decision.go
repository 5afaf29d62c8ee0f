package inventory

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// AnnotationBinding, on every PlacementDecision slice Flotilla publishes,
// names the binding it follows: "ResourceBinding <namespace>/<name>" or
// "ClusterResourceBinding <name>".
const AnnotationBinding = "inventory.flotilla.io/binding"

// Placement is what a PlacementDecision publishes of one binding.
type Placement struct {
	// Kind is ResourceBinding or ClusterResourceBinding; Namespace (empty
	// for a ClusterResourceBinding) and Name name the binding.
	Kind, Namespace, Name string
	// PermanentID is the binding's permanent-id label: the decision key,
	// the same on every slice, and the binding's label on each.
	PermanentID string
	// SchedulerName is the binding's scheduler.
	SchedulerName string
	// Clusters are the binding's spec.clusters.
	Clusters []workv1alpha2.TargetCluster
}

// Decisions returns the PlacementDecision slices of p, in namespace: one
// decision per cluster of p that exists (a deleted cluster takes its
// decisions along), sorted by name, at most MaxDecisionsPerSlice a slice,
// each referring to the cluster's profile in profiles. There is always one
// slice, empty while nothing is placed. Slice i is named after the binding
// with the suffix -i and labelled with the decision key and index. The
// result is deterministic, so publishing it again changes nothing.
func Decisions(p Placement, namespace, profiles string, exists func(cluster string) bool) []*unstructured.Unstructured {
	var decisions []any
	names := make([]workv1alpha2.TargetCluster, 0, len(p.Clusters))
	for _, c := range p.Clusters {
		if exists(c.Name) {
			names = append(names, c)
		}
	}
	slices.SortFunc(names, func(a, b workv1alpha2.TargetCluster) int { return cmp.Compare(a.Name, b.Name) })
	for _, c := range names {
		decisions = append(decisions, map[string]any{
			"clusterProfileRef": map[string]any{"name": c.Name, "namespace": profiles},
			"reason":            reason(c),
		})
	}
	key := DecisionKey(p)
	var out []*unstructured.Unstructured
	for i := 0; i == 0 || i*multiclusterv1alpha1.MaxDecisionsPerSlice < len(decisions); i++ {
		chunk := decisions[i*multiclusterv1alpha1.MaxDecisionsPerSlice : min(len(decisions), (i+1)*multiclusterv1alpha1.MaxDecisionsPerSlice)]
		if chunk == nil {
			chunk = []any{}
		}
		d := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": multiclusterv1alpha1.SchemeGroupVersion.String(),
			"kind":       multiclusterv1alpha1.PlacementDecisionKind,
			"decisions":  chunk,
		}}
		if p.SchedulerName != "" {
			d.Object["schedulerName"] = p.SchedulerName
		}
		d.SetNamespace(namespace)
		d.SetName(SliceName(p.Name, i))
		d.SetLabels(map[string]string{
			multiclusterv1alpha1.LabelClusterManager: Manager,
			multiclusterv1alpha1.LabelDecisionKey:    key,
			multiclusterv1alpha1.LabelDecisionIndex:  strconv.Itoa(i),
		})
		d.SetAnnotations(map[string]string{AnnotationBinding: bindingRef(p)})
		out = append(out, d)
	}
	return out
}

// DecisionKey is p's decision key: its permanent id, or, for a binding
// without one, a hash of its kind, namespace and name.
func DecisionKey(p Placement) string {
	if p.PermanentID != "" && len(validation.IsValidLabelValue(p.PermanentID)) == 0 {
		return p.PermanentID
	}
	return hash(bindingRef(p))
}

// SliceName is the name of slice index of the decision of the binding
// named binding: binding-index, shortened with a hash when it would exceed
// an object name's 253 characters.
func SliceName(binding string, index int) string {
	suffix := "-" + strconv.Itoa(index)
	if len(binding)+len(suffix) <= validation.DNS1123SubdomainMaxLength {
		return binding + suffix
	}
	h := hash(binding)
	return binding[:validation.DNS1123SubdomainMaxLength-len(suffix)-len(h)-1] + "-" + h + suffix
}

func bindingRef(p Placement) string { return BindingRef(p.Kind, p.Namespace, p.Name) }

// BindingRef is the value of AnnotationBinding for the binding of kind in
// namespace (empty for a ClusterResourceBinding) named name.
func BindingRef(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

func reason(c workv1alpha2.TargetCluster) string {
	if c.Replicas > 0 {
		return fmt.Sprintf("Scheduled by Flotilla with %d replicas", c.Replicas)
	}
	return "Scheduled by Flotilla"
}

func hash(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s)) // never fails
	return strconv.FormatUint(h.Sum64(), 36)
}
