package binding

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/rolloutplan"
	"github.com/flotilla-io/flotilla/telemetry"
)

// Event reasons (Karmada's).
const (
	EventReasonSyncWorkSucceed = "SyncWorkSucceed"
	// EventReasonCleanupWorkFailed: the Works of a binding being deleted
	// could not be removed.
	EventReasonCleanupWorkFailed = "CleanupWorkFailed"
	EventReasonSyncWorkFailed    = "SyncWorkFailed"
)

// claimKeys are the labels a policy's claim puts on both the template and
// its binding.
var claimKeys = []string{policyv1alpha1.PropagationPolicyPermanentIDLabel, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel}

// claimSeen says whether the template carries the policy claim its binding
// carries (true when the binding carries none).
func claimSeen(binding, template map[string]string) bool {
	for _, k := range claimKeys {
		if v, ok := binding[k]; ok && template[k] != v {
			return false
		}
	}
	return true
}

// reconcile syncs one binding: a binding being deleted has its Works
// deleted and then its finalizer dropped (finalizeReconciler); otherwise
// each target cluster gets the Work of the template, overridden and revised
// for it, and the Works of clusters no longer targeted go
// (syncReconciler). Each Work is written only when it changed; the events
// sum the round up.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	var (
		b        *bindingView
		obj      runtime.Object
		labels   map[string]string
		deleting bool
		fin      []string
	)
	ns, name, cluster, ok := names.ParseBindingKey(key)
	if !ok {
		return nil
	}
	if cluster {
		crb, err := c.crbs.Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		b = &bindingView{cluster: true, name: crb.Name, id: crb.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel], spec: &crb.Spec,
			revisions: revisions(crb.Annotations), apply: flotillav1alpha1.ApplyAnnotationsOf(crb.Annotations)}
		obj, labels, deleting, fin = crb, crb.Labels, crb.DeletionTimestamp != nil, crb.Finalizers
	} else {
		rb, err := c.rbs.ResourceBindings(ns).Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		b = &bindingView{namespace: rb.Namespace, name: rb.Name, id: rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel], spec: &rb.Spec,
			revisions: revisions(rb.Annotations), apply: flotillav1alpha1.ApplyAnnotationsOf(rb.Annotations)}
		obj, labels, deleting, fin = rb, rb.Labels, rb.DeletionTimestamp != nil, rb.Finalizers
	}
	if b.id == "" {
		return nil
	}
	indexed, err := c.works.ByIndex(worksByBinding, b.id)
	if err != nil {
		return err
	}
	existing := make([]*workv1alpha1.Work, 0, len(indexed))
	for _, o := range indexed {
		existing = append(existing, o.(*workv1alpha1.Work))
	}
	existing = c.created.With(b.id, existing)
	if deleting {
		err := c.finalize.reconcile(ctx, b, existing, fin)
		if err != nil {
			c.recorder.Event(obj, corev1.EventTypeWarning, EventReasonCleanupWorkFailed, fmt.Sprintf("Failed to clean up the works of %s: %v", b.describe(), err))
		}
		return err
	}
	gvk := gvkOf(b.spec.Resource)
	template, err := c.templates.Get(ctx, gvk, b.spec.Resource.Namespace, b.spec.Resource.Name)
	if errors.Is(err, templates.ErrNotWatched) || apierrors.IsNotFound(err) {
		// The detector deletes bindings of templates that are gone.
		return nil
	} else if err != nil {
		return err
	}
	if uid := b.spec.Resource.UID; uid != "" && uid != template.GetUID() {
		return nil
	}
	if !claimSeen(labels, template.GetLabels()) {
		// The detector claims the template before it writes the binding;
		// the template cache has not seen the claim yet. Works built now
		// would miss the claim's metadata and be written again once it
		// arrives (a second member write); the template's update queues
		// the binding.
		return nil
	}
	start := time.Now()
	wrote, err := c.sync.reconcile(ctx, b, template, existing)
	telemetry.ObserveSyncWork(err, start)
	ref := templates.Ref(template)
	if err != nil {
		c.recorder.Event(ref, corev1.EventTypeWarning, EventReasonSyncWorkFailed, fmt.Sprintf("Failed to sync work of %s: %v", b.describe(), err))
		c.recorder.Event(obj, corev1.EventTypeWarning, EventReasonSyncWorkFailed, err.Error())
		return err
	}
	if wrote {
		msg := fmt.Sprintf("Sync work of %s successful.", b.describe())
		c.recorder.Event(ref, corev1.EventTypeNormal, EventReasonSyncWorkSucceed, msg)
		c.recorder.Event(obj, corev1.EventTypeNormal, EventReasonSyncWorkSucceed, msg)
	}
	return nil
}

// revisions reads the revisions a rollout holds the clusters of a binding
// at; nil when no rollout strategy holds them.
func revisions(annotations map[string]string) map[string]string {
	v, ok := annotations[flotillav1alpha1.RevisionsAnnotation]
	if !ok {
		return nil
	}
	return rolloutplan.ParseRevisions(v)
}

func (b *bindingView) describe() string {
	if b.cluster {
		return fmt.Sprintf("clusterResourceBinding(%s)", b.name)
	}
	return fmt.Sprintf("resourceBinding(%s/%s)", b.namespace, b.name)
}

func (c *Controller) clusterOverrides() []*policyv1alpha1.ClusterOverridePolicy {
	list, _ := c.cops.List(labels.Everything())
	return list
}

func (c *Controller) namespaceOverrides(ns string) []*policyv1alpha1.OverridePolicy {
	if ns == "" {
		return nil
	}
	list, _ := c.ops.OverridePolicies(ns).List(labels.Everything())
	return list
}

// targets are the clusters a binding propagates to: its own scheduling
// result plus, for an attached binding, the clusters of every binding that
// requires it.
func targets(spec *workv1alpha2.ResourceBindingSpec) []workv1alpha2.TargetCluster {
	out := append([]workv1alpha2.TargetCluster(nil), spec.Clusters...)
	seen := map[string]bool{}
	for _, t := range out {
		seen[t.Name] = true
	}
	for _, r := range spec.RequiredBy {
		for _, t := range r.Clusters {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, workv1alpha2.TargetCluster{Name: t.Name})
			}
		}
	}
	return out
}
