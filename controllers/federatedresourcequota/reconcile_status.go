package federatedresourcequota

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/placement"
)

// reconcile sets the status of the quota with key from its Works with one
// patch of the status subresource, none when it holds that status already.
// Events say which part changed: AggregateStatus* for aggregatedStatus,
// CollectOverallStatus* for overall and overallUsed.
func (c *StatusController) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	quota, err := c.quotas.FederatedResourceQuotas(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.written.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if quota.DeletionTimestamp != nil {
		return nil
	}
	ws, err := quotaWorks(c.works, key)
	if err != nil {
		return err
	}
	agg, err := aggregate(ws, assignments(quota.Spec), quota.Name)
	if err != nil {
		// Retrying cannot help: the Work's next status change queues the
		// quota again.
		c.recorder.Event(quota, corev1.EventTypeWarning, EventReasonAggregateStatusFailed, err.Error())
		klog.FromContext(ctx).Error(err, "Collecting the member status failed", "federatedResourceQuota", klog.KObj(quota))
		return nil
	}
	bindings, err := c.bindings.ResourceBindings(ns).List(labels.Everything())
	if err != nil {
		return err
	}
	desired := desiredStatus(quota.Spec, agg, overallUsed(bindings))
	aggChanged, overallChanged := statusDiff(c.written.current(key, quota), desired)
	if !aggChanged && !overallChanged {
		return nil
	}
	patch, err := statusPatch(desired)
	if err != nil {
		return err
	}
	_, err = c.client.PolicyV1alpha1().FederatedResourceQuotas(ns).Patch(ctx, name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		if aggChanged {
			c.recorder.Event(quota, corev1.EventTypeWarning, EventReasonAggregateStatusFailed, err.Error())
		}
		if overallChanged {
			c.recorder.Event(quota, corev1.EventTypeWarning, EventReasonCollectOverallStatusFailed, err.Error())
		}
		return fmt.Errorf("writing the status of FederatedResourceQuota %s: %w", key, err)
	}
	c.written.wrote(key, quota.ResourceVersion, desired)
	msg := fmt.Sprintf("Collect status of FederatedResourceQuota(%s) succeed.", key)
	if aggChanged {
		c.recorder.Event(quota, corev1.EventTypeNormal, EventReasonAggregateStatusSucceed, msg)
	}
	if overallChanged {
		c.recorder.Event(quota, corev1.EventTypeNormal, EventReasonCollectOverallStatusSucceed, msg)
	}
	klog.FromContext(ctx).V(2).Info("Wrote the FederatedResourceQuota status", "federatedResourceQuota", klog.KObj(quota),
		"aggregatedStatus", aggChanged, "overall", overallChanged)
	return nil
}

// aggregate returns the status of the ResourceQuota name reflected in each
// Work of an assigned cluster, sorted by cluster. Works being deleted, not
// applied, or without a reflected status yet are left out (Karmada's
// aggregatedStatusFormWorks); a reflected status that is not a
// ResourceQuotaStatus is an error.
func aggregate(ws []*workv1alpha1.Work, assigned map[string]corev1.ResourceList, name string) ([]policyv1alpha1.ClusterQuotaStatus, error) {
	var out []policyv1alpha1.ClusterQuotaStatus
	for _, w := range ws {
		cluster, ok := names.ClusterOf(w.Namespace)
		if _, want := assigned[cluster]; !ok || !want || w.DeletionTimestamp != nil || !applied(w) {
			continue
		}
		raw := reflected(w, name)
		if raw == nil {
			continue
		}
		var st corev1.ResourceQuotaStatus
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("reading the ResourceQuota status of cluster %s from Work %s/%s: %w", cluster, w.Namespace, w.Name, err)
		}
		out = append(out, policyv1alpha1.ClusterQuotaStatus{ClusterName: cluster, ResourceQuotaStatus: st})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClusterName < out[j].ClusterName })
	return out, nil
}

// applied tells whether the Work's Applied condition is True.
func applied(w *workv1alpha1.Work) bool {
	return meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied)
}

// reflected returns the status the execution controller reflected from the
// ResourceQuota name; nil when there is none.
func reflected(w *workv1alpha1.Work, name string) []byte {
	for _, ms := range w.Status.ManifestStatuses {
		id := ms.Identifier
		if id.Group == "" && id.Kind == resourceQuotaKind && id.Name == name {
			if raw := rawOf(ms.Status); len(raw) > 0 && string(raw) != "null" {
				return raw
			}
		}
	}
	return nil
}

func rawOf(r *runtime.RawExtension) []byte {
	if r == nil {
		return nil
	}
	return r.Raw
}

// bindingUsage is what a binding's scheduling result takes of a quota
// (placement.BindingUsage, as flotilla-apiserver counts it when it
// enforces spec.overall on binding writes).
func bindingUsage(b *workv1alpha2.ResourceBinding) corev1.ResourceList {
	return placement.BindingUsage(&b.Spec, b.Spec.Clusters)
}

// overallUsed is what the bindings of a namespace use together.
func overallUsed(bindings []*workv1alpha2.ResourceBinding) corev1.ResourceList {
	parts := make([]corev1.ResourceList, 0, len(bindings))
	for _, b := range bindings {
		parts = append(parts, bindingUsage(b))
	}
	return placement.Add(parts...)
}

// sumUsed adds up the used resources of every cluster.
func sumUsed(agg []policyv1alpha1.ClusterQuotaStatus) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, s := range agg {
		for res, q := range s.Used {
			sum := out[res]
			sum.Add(q)
			out[res] = sum
		}
	}
	return out
}

// desiredStatus is the status of a quota with spec whose clusters report
// agg and whose namespace's bindings use used. overall is spec.overall.
// overallUsed, as Karmada splits it between its status controllers: for a
// quota with static assignments, the sum of what the member ResourceQuotas
// report (they are what enforces it there); for one without, what the
// bindings use of the resources spec.overall names (FederatedQuotaEnforcement,
// counting the scheduling results, so that it moves as soon as a result is
// written).
func desiredStatus(spec policyv1alpha1.FederatedResourceQuotaSpec, agg []policyv1alpha1.ClusterQuotaStatus, used corev1.ResourceList) policyv1alpha1.FederatedResourceQuotaStatus {
	overallUsed := placement.Within(used, spec.Overall)
	if len(spec.StaticAssignments) > 0 {
		overallUsed = sumUsed(agg)
	}
	return policyv1alpha1.FederatedResourceQuotaStatus{
		Overall:          spec.Overall.DeepCopy(),
		OverallUsed:      overallUsed,
		AggregatedStatus: agg,
	}
}

// statusDiff tells which parts of the status differ, by value (quantities
// compared as numbers, nil and empty alike).
func statusDiff(cur, desired policyv1alpha1.FederatedResourceQuotaStatus) (aggregated, overall bool) {
	aggregated = !apiequality.Semantic.DeepEqual(cur.AggregatedStatus, desired.AggregatedStatus)
	overall = !apiequality.Semantic.DeepEqual(cur.Overall, desired.Overall) || !apiequality.Semantic.DeepEqual(cur.OverallUsed, desired.OverallUsed)
	return aggregated, overall
}

// statusPatch is the merge patch setting the three status fields whole,
// empty ones written as null so that they are removed. The controller is
// their only writer, so the patch needs no resourceVersion.
func statusPatch(s policyv1alpha1.FederatedResourceQuotaStatus) ([]byte, error) {
	st := map[string]any{"overall": nil, "overallUsed": nil, "aggregatedStatus": nil}
	if len(s.Overall) > 0 {
		st["overall"] = s.Overall
	}
	if len(s.OverallUsed) > 0 {
		st["overallUsed"] = s.OverallUsed
	}
	if len(s.AggregatedStatus) > 0 {
		st["aggregatedStatus"] = s.AggregatedStatus
	}
	return json.Marshal(map[string]any{"status": st})
}
