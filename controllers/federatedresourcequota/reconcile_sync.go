package federatedresourcequota

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
	"github.com/flotilla-io/flotilla/names"
)

// resourceQuotaKind is the kind of the objects the Works carry.
const resourceQuotaKind = "ResourceQuota"

// reconcile makes the Works of the quota with key match its static
// assignments: one per assigned cluster that exists, none elsewhere, none
// at all once the quota is gone. It records SyncWorkSucceed when it wrote
// something and SyncWorkFailed when a write failed.
func (c *SyncController) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	existing, err := quotaWorks(c.works, key)
	if err != nil {
		return err
	}
	quota, err := c.quotas.FederatedResourceQuotas(ns).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && quota.DeletionTimestamp != nil) {
		_, err := c.deleteWorks(ctx, existing)
		return err
	}
	if err != nil {
		return err
	}
	assigned := assignments(quota.Spec)
	deleted, err := c.deleteWorks(ctx, staleWorks(existing, assigned))
	errs := []error{err}
	written := deleted > 0
	for _, cluster := range sortedKeys(assigned) {
		wrote, err := c.syncWork(ctx, quota, cluster, assigned[cluster])
		written = written || wrote
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		c.recorder.Event(quota, corev1.EventTypeWarning, EventReasonSyncWorkFailed, err.Error())
		return fmt.Errorf("syncing the Works of FederatedResourceQuota %s: %w", key, err)
	}
	if written {
		c.recorder.Eventf(quota, corev1.EventTypeNormal, EventReasonSyncWorkSucceed, "Sync works for FederatedResourceQuota(%s) succeed.", key)
	}
	return nil
}

// syncWork makes the Work of quota in cluster carry a ResourceQuota with
// hard, writing only when the stored Work differs. A cluster that does not
// exist (or is leaving) gets no Work: it has no execution namespace. wrote
// says whether it wrote.
func (c *SyncController) syncWork(ctx context.Context, quota *policyv1alpha1.FederatedResourceQuota, cluster string, hard corev1.ResourceList) (wrote bool, _ error) {
	cl, err := c.clusters.Get(cluster)
	if apierrors.IsNotFound(err) || (err == nil && cl.DeletionTimestamp != nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	desired, err := desiredWork(quota, cluster, hard)
	if err != nil {
		return false, err
	}
	var cur *workv1alpha1.Work
	obj, exists, err := c.works.GetByKey(desired.Namespace + "/" + desired.Name)
	if err != nil {
		return false, err
	}
	if exists {
		cur = obj.(*workv1alpha1.Work)
		// Compared as the server stores it: the stored labels (the
		// permanent id) kept, the manifest mutated.
		l := maps.Clone(cur.Labels)
		if l == nil {
			l = map[string]string{}
		}
		maps.Copy(l, desired.Labels)
		desired.Labels = l
		if err := mutation.MutateWork(desired, false); err != nil {
			return false, err
		}
	}
	if works.Needless(cur, desired) {
		return false, nil
	}
	if cur == nil {
		_, err := c.client.WorkV1alpha1().Works(desired.Namespace).Create(ctx, desired, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			// The cache is behind (typically this controller's own create
			// of a moment ago): the Work's add event queues the quota again,
			// and it is compared then. Not a failure worth an event.
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("creating Work %s/%s for cluster %s: %w", desired.Namespace, desired.Name, cluster, err)
		}
		klog.FromContext(ctx).V(2).Info("Created the ResourceQuota Work", "federatedResourceQuota", klog.KObj(quota), "cluster", cluster)
		return true, nil
	}
	if _, err := works.Write(ctx, c.client, cur, desired, FieldManager); err != nil {
		return false, fmt.Errorf("writing Work %s/%s for cluster %s: %w", desired.Namespace, desired.Name, cluster, err)
	}
	klog.FromContext(ctx).V(2).Info("Updated the ResourceQuota Work", "federatedResourceQuota", klog.KObj(quota), "cluster", cluster)
	return true, nil
}

// deleteWorks deletes ws, but for those being deleted already, and returns
// how many it deleted.
func (c *SyncController) deleteWorks(ctx context.Context, ws []*workv1alpha1.Work) (int, error) {
	var errs []error
	n := 0
	for _, w := range ws {
		if w.DeletionTimestamp != nil {
			continue
		}
		err := c.client.WorkV1alpha1().Works(w.Namespace).Delete(ctx, w.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &w.UID}})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting Work %s/%s: %w", w.Namespace, w.Name, err))
		default:
			n++
			klog.FromContext(ctx).V(2).Info("Deleted the ResourceQuota Work", "work", klog.KObj(w))
		}
	}
	return n, errors.Join(errs...)
}

// assignments maps each cluster of the static assignments to its hard
// limits. Validation rejects a cluster named twice; were one, the first
// assignment would count, as in Karmada.
func assignments(spec policyv1alpha1.FederatedResourceQuotaSpec) map[string]corev1.ResourceList {
	out := make(map[string]corev1.ResourceList, len(spec.StaticAssignments))
	for _, a := range spec.StaticAssignments {
		if _, seen := out[a.ClusterName]; !seen {
			out[a.ClusterName] = a.Hard
		}
	}
	return out
}

// staleWorks returns the Works of existing in the execution namespace of
// no assigned cluster.
func staleWorks(existing []*workv1alpha1.Work, assigned map[string]corev1.ResourceList) []*workv1alpha1.Work {
	var out []*workv1alpha1.Work
	for _, w := range existing {
		cluster, ok := names.ClusterOf(w.Namespace)
		if _, want := assigned[cluster]; !ok || !want {
			out = append(out, w)
		}
	}
	return out
}

// resourceQuota returns the manifest delivered to cluster: a ResourceQuota
// named after quota, in its namespace, with hard, labelled and annotated
// as Karmada labels the objects of its Works (managed, and the Work's name
// and namespace).
func resourceQuota(quota *policyv1alpha1.FederatedResourceQuota, cluster string, hard corev1.ResourceList) (*unstructured.Unstructured, error) {
	rq := &corev1.ResourceQuota{
		TypeMeta: metav1.TypeMeta{APIVersion: corev1.SchemeGroupVersion.String(), Kind: resourceQuotaKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: quota.Name, Namespace: quota.Namespace,
			Labels: map[string]string{workv1alpha1.ManagedByKarmadaLabel: workv1alpha1.ManagedByKarmadaLabelValue},
			Annotations: map[string]string{
				workv1alpha2.WorkNameAnnotation:      names.WorkName(resourceQuotaKind, quota.Name, quota.Namespace),
				workv1alpha2.WorkNamespaceAnnotation: names.ExecutionNamespace(cluster),
			},
		},
		Spec: corev1.ResourceQuotaSpec{Hard: hard},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rq)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: m}
	if err := mutation.PruneManifest(obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// desiredWork returns the Work delivering quota's ResourceQuota to cluster,
// before the server's mutation: named after the quota in the cluster's
// execution namespace, labelled with the quota's namespace and name.
func desiredWork(quota *policyv1alpha1.FederatedResourceQuota, cluster string, hard corev1.ResourceList) (*workv1alpha1.Work, error) {
	rq, err := resourceQuota(quota, cluster, hard)
	if err != nil {
		return nil, err
	}
	raw, err := rq.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name:      names.WorkName(resourceQuotaKind, quota.Name, quota.Namespace),
			Namespace: names.ExecutionNamespace(cluster),
			Labels: map[string]string{
				policyv1alpha1.FederatedResourceQuotaNamespaceLabel: quota.Namespace,
				policyv1alpha1.FederatedResourceQuotaNameLabel:      quota.Name,
			},
			Finalizers: []string{workv1alpha1.ExecutionControllerFinalizer},
		},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{
			Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}},
		}},
	}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
