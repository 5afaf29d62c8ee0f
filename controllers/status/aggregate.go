package status

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/failover"
	"github.com/flotilla-io/flotilla/names"
)

// Messages of the FullyApplied condition; Karmada's wording.
const (
	fullyAppliedSuccessMessage = "All works have been successfully applied"
	fullyAppliedFailedMessage  = "Failed to apply all works, see status.aggregatedStatus for details"
)

// aggregateItems returns one status item per Work of a binding, sorted by
// cluster, as Karmada assembles them: Works being deleted and Works outside
// an execution namespace are skipped; a Work not applied (Applied missing,
// False or Unknown) reports the condition's message and health Unknown and
// no status; an applied Work reports the status and health of the manifest
// that is the template (health Unknown when it has none yet, or when the
// Work changed since it was applied: the condition observes an older
// generation, or the Work was built for another number of replicas than
// the binding assigns to its cluster now: the binding controller has yet
// to move replicas to it).
func aggregateItems(works []*workv1alpha1.Work, spec *workv1alpha2.ResourceBindingSpec) []workv1alpha2.AggregatedStatusItem {
	resource := spec.Resource
	assigned := map[string]string{}
	for _, tc := range spec.Clusters {
		assigned[tc.Name] = strconv.FormatInt(int64(tc.Replicas), 10)
	}
	type named struct {
		work string
		item workv1alpha2.AggregatedStatusItem
	}
	var all []named
	for _, w := range works {
		if w.DeletionTimestamp != nil {
			continue
		}
		cluster, ok := names.ClusterOf(w.Namespace)
		if !ok || cluster == "" {
			continue
		}
		item := workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Health: workv1alpha2.ResourceUnknown}
		var stale bool
		if cond := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied); cond != nil {
			item.Applied = cond.Status == metav1.ConditionTrue
			if !item.Applied {
				item.AppliedMessage = cond.Message
			}
			// Applied for an earlier spec of the Work: the status is of
			// that spec, and the health unknown until the new one applies.
			stale = cond.ObservedGeneration != 0 && cond.ObservedGeneration < w.Generation
		}
		if built, ok := w.Annotations[workv1alpha2.AssignedReplicasAnnotation]; ok {
			if want, scheduled := assigned[cluster]; scheduled && want != built {
				stale = true
			}
		}
		if item.Applied && !stale {
			if ms := templateStatus(w, resource); ms != nil {
				item.Status = ms.Status.DeepCopy()
				if ms.Health != "" {
					item.Health = workv1alpha2.ResourceHealth(ms.Health)
				}
			}
		}
		all = append(all, named{work: w.Name, item: item})
	}
	// Sorted by cluster; by Work name too, so that the order of two Works in
	// one cluster (which should not happen) does not flap.
	sort.Slice(all, func(i, j int) bool {
		if all[i].item.ClusterName != all[j].item.ClusterName {
			return all[i].item.ClusterName < all[j].item.ClusterName
		}
		return all[i].work < all[j].work
	})
	items := make([]workv1alpha2.AggregatedStatusItem, 0, len(all))
	for _, n := range all {
		items = append(items, n.item)
	}
	return items
}

// templateStatus returns the manifest status of a Work whose identifier is
// the template: same group, version, kind, namespace and name, and, when
// the template is found among the Work's manifests, the same ordinal.
func templateStatus(w *workv1alpha1.Work, resource workv1alpha2.ObjectReference) *workv1alpha1.ManifestStatus {
	gv, err := schema.ParseGroupVersion(resource.APIVersion)
	if err != nil {
		return nil
	}
	ordinal := manifestIndex(w.Spec.Workload.Manifests, resource)
	for i := range w.Status.ManifestStatuses {
		ms := &w.Status.ManifestStatuses[i]
		id := ms.Identifier
		if id.Group == gv.Group && id.Version == gv.Version && id.Kind == resource.Kind &&
			id.Namespace == resource.Namespace && id.Name == resource.Name && (ordinal < 0 || id.Ordinal == ordinal) {
			return ms
		}
	}
	return nil
}

// manifestIndex returns the index of the template among manifests, or -1.
func manifestIndex(manifests []workv1alpha1.Manifest, resource workv1alpha2.ObjectReference) int {
	for i, m := range manifests {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"metadata"`
		}
		if json.Unmarshal(m.Raw, &head) != nil {
			continue
		}
		if head.APIVersion == resource.APIVersion && head.Kind == resource.Kind &&
			head.Metadata.Namespace == resource.Namespace && head.Metadata.Name == resource.Name {
			return i
		}
	}
	return -1
}

// targetClusters are the clusters a binding's resource should exist in:
// the scheduled clusters, those of the bindings that require it, and those
// still being gracefully evicted from (Karmada's
// ObtainBindingSpecExistingClusters).
func targetClusters(spec *workv1alpha2.ResourceBindingSpec) sets.Set[string] {
	clusters := sets.New[string]()
	for _, tc := range spec.Clusters {
		clusters.Insert(tc.Name)
	}
	for _, snapshot := range spec.RequiredBy {
		for _, tc := range snapshot.Clusters {
			clusters.Insert(tc.Name)
		}
	}
	for i := range spec.GracefulEvictionTasks {
		// The Work of an immediate eviction is removed at once.
		if task := &spec.GracefulEvictionTasks[i]; failover.KeepsWork(task) {
			clusters.Insert(task.FromCluster)
		}
	}
	return clusters
}

// fullyAppliedCondition is True when there is exactly one applied item for
// each target cluster and no other item; False when not scheduled yet.
func fullyAppliedCondition(spec *workv1alpha2.ResourceBindingSpec, generation int64, items []workv1alpha2.AggregatedStatusItem) metav1.Condition {
	targets := targetClusters(spec)
	applied := len(targets) > 0 && len(items) == len(targets)
	for _, item := range items {
		applied = applied && item.Applied && targets.Has(item.ClusterName)
	}
	// The condition observes the binding's generation: the aggregated
	// status beside it is of that spec (its clusters and assignments), so
	// a reader can tell it from one written before the last scheduling.
	if applied {
		return metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue,
			Reason: workv1alpha2.FullyAppliedSuccessReason, Message: fullyAppliedSuccessMessage, ObservedGeneration: generation}
	}
	return metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionFalse,
		Reason: workv1alpha2.FullyAppliedFailedReason, Message: fullyAppliedFailedMessage, ObservedGeneration: generation}
}

// driftedCondition sums up the Drifted conditions of the binding's Works
// (Flotilla's own condition): True while a member object differs from
// what was applied and was not written back, False with DriftCorrected
// once every drift found was; the message names each cluster with its
// Work's message; the transition time is the latest drift's. Nil when no
// Work has ever reported a drift.
func driftedCondition(works []*workv1alpha1.Work, generation int64) *metav1.Condition {
	type drifted struct {
		cluster string
		cond    *metav1.Condition
	}
	var found []drifted
	for _, w := range works {
		if w.DeletionTimestamp != nil {
			continue
		}
		if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDrifted); c != nil {
			cluster, _ := names.ClusterOf(w.Namespace)
			found = append(found, drifted{cluster: cluster, cond: c})
		}
	}
	if len(found) == 0 {
		return nil
	}
	sort.Slice(found, func(i, j int) bool { return found[i].cluster < found[j].cluster })
	out := &metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionFalse,
		Reason: workv1alpha1.WorkDriftCorrectedReason, ObservedGeneration: generation}
	parts := make([]string, 0, len(found))
	for _, f := range found {
		parts = append(parts, f.cluster+": "+f.cond.Message)
		if f.cond.Status == metav1.ConditionTrue {
			out.Status, out.Reason = metav1.ConditionTrue, f.cond.Reason
		}
		if f.cond.LastTransitionTime.After(out.LastTransitionTime.Time) {
			out.LastTransitionTime = f.cond.LastTransitionTime
		}
	}
	out.Message = strings.Join(parts, " | ")
	if len(out.Message) > maxDriftMessage {
		out.Message = out.Message[:maxDriftMessage]
	}
	return out
}

// maxDriftMessage bounds the binding's Drifted message.
const maxDriftMessage = 1024

// conditionEqual compares the parts of two conditions this controller sets.
func conditionEqual(a, b *metav1.Condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message && a.ObservedGeneration == b.ObservedGeneration
}

// itemsEqual compares aggregated status items, their statuses as JSON values
// (the server may re-encode them).
func itemsEqual(a, b []workv1alpha2.AggregatedStatusItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ClusterName != y.ClusterName || x.Applied != y.Applied || x.AppliedMessage != y.AppliedMessage ||
			x.Health != y.Health || !rawEqual(x.Status, y.Status) {
			return false
		}
	}
	return true
}

// rawEqual compares two raw JSON values semantically; absent, empty and
// null are equal.
func rawEqual(a, b *runtime.RawExtension) bool {
	ra, rb := rawBytes(a), rawBytes(b)
	if bytes.Equal(ra, rb) {
		return true
	}
	if ra == nil || rb == nil {
		return false
	}
	var va, vb any
	if json.Unmarshal(ra, &va) != nil || json.Unmarshal(rb, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func rawBytes(r *runtime.RawExtension) []byte {
	if r == nil {
		return nil
	}
	raw := bytes.TrimSpace(r.Raw)
	if len(raw) == 0 && r.Object != nil {
		raw, _ = json.Marshal(r.Object)
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	return raw
}
