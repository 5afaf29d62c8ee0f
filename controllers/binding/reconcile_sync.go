package binding

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
	"github.com/flotilla-io/flotilla/failover"
	"github.com/flotilla-io/flotilla/names"
)

// maxConcurrentWorkWrites bounds the Work writes one binding has in flight.
const maxConcurrentWorkWrites = 16

// syncReconciler writes the Work of every target cluster of a binding and
// deletes the Works of clusters no longer targeted.
type syncReconciler struct {
	// getCluster gets a Cluster from the cache.
	getCluster func(name string) (*clusterv1alpha1.Cluster, error)
	// build returns the Work of template for one target cluster (replicas
	// revised, overrides applied), as the registry will store it, with id
	// as its permanent id.
	build func(b *bindingView, template *unstructured.Unstructured, target workv1alpha2.TargetCluster,
		cluster *clusterv1alpha1.Cluster, completions map[string]int32, id string) (*workv1alpha1.Work, error)
	// held returns the template a cluster runs and the hash of its revision:
	// under a rollout strategy, the revision the binding holds the cluster
	// at (template itself when that is its revision), with "" as hash
	// otherwise. errRevisionUnknown leaves the cluster's Work as it is.
	held func(b *bindingView, template *unstructured.Unstructured, cluster string) (*unstructured.Unstructured, string, error)
	// completions divides a Job's completions; nil: not divided.
	completions CompletionsFunc
	// writeWork creates desired (cur nil) or patches cur into desired.
	writeWork func(ctx context.Context, cur, desired *workv1alpha1.Work) error
	// deleteWork deletes a Work.
	deleteWork func(ctx context.Context, namespace, name string) error
	// event records an event.
	event func(obj runtime.Object, eventType, reason, message string)
}

// reconcile writes the Works of b from template, existing being b's Works;
// wrote tells whether anything was written.
func (r *syncReconciler) reconcile(ctx context.Context, b *bindingView, template *unstructured.Unstructured, existing []*workv1alpha1.Work) (bool, error) {
	stored := map[string]*workv1alpha1.Work{} // by namespace
	for _, w := range existing {
		stored[w.Namespace] = w
	}
	keep := map[string]bool{}
	for i := range b.spec.GracefulEvictionTasks {
		// Works of clusters being evicted gracefully stay until the
		// eviction is done; those evicted at once go.
		if t := &b.spec.GracefulEvictionTasks[i]; failover.KeepsWork(t) {
			keep[names.ExecutionNamespace(t.FromCluster)] = true
		}
	}
	var completions map[string]int32
	if isJob(template.GroupVersionKind()) && divided(b.spec.Placement) && r.completions != nil {
		if n, ok, _ := unstructured.NestedInt64(template.Object, "spec", "completions"); ok && n > 0 {
			completions = r.completions(int32(n), b.spec.Clusters, string(template.GetUID()))
		}
	}
	// The Works are built here and written concurrently: a binding's
	// writes do not depend on each other, and one round trip instead of
	// one per cluster keeps the binding's latency flat in the number of
	// clusters when the server is busy.
	var (
		mu     sync.Mutex
		wrote  bool
		errs   []error
		writes errgroup.Group
	)
	writes.SetLimit(maxConcurrentWorkWrites)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	// write runs op, which says whether it wrote.
	write := func(op func() (bool, error)) {
		writes.Go(func() error {
			did, err := op()
			if err != nil {
				fail(err)
				return nil
			}
			if did {
				mu.Lock()
				wrote = true
				mu.Unlock()
			}
			return nil
		})
	}
	for _, target := range targets(b.spec) {
		ns := names.ExecutionNamespace(target.Name)
		keep[ns] = true
		cluster, err := r.getCluster(target.Name)
		if err != nil {
			fail(fmt.Errorf("cluster %s: %w", target.Name, err))
			continue
		}
		if cluster.DeletionTimestamp != nil {
			continue
		}
		cur := stored[ns]
		id := ""
		if cur != nil {
			id = cur.Labels[workv1alpha2.WorkPermanentIDLabel]
		}
		tmpl, revision, err := r.held(b, template, target.Name)
		if errors.Is(err, errRevisionUnknown) {
			// The revision is not in the cache yet; its arrival queues the
			// binding. Nothing of the cluster's is written meanwhile.
			continue
		} else if err != nil {
			fail(fmt.Errorf("cluster %s: %w", target.Name, err))
			continue
		}
		desired, err := r.build(b, tmpl, target, cluster, completions, id)
		if oe := (*overrideError)(nil); errors.As(err, &oe) {
			r.templateEvent(template, overrideFailedEvent(oe.cluster, oe.err))
		}
		if err != nil {
			fail(err)
			continue
		}
		if revision != "" {
			if desired.Annotations == nil {
				desired.Annotations = map[string]string{}
			}
			desired.Annotations[flotillav1alpha1.RevisionAnnotation] = revision
		}
		if works.Needless(cur, desired) {
			continue
		}
		write(func() (bool, error) {
			if err := r.writeWork(ctx, cur, desired); err != nil {
				return false, err
			}
			// The overrides are reported when they reach a Work.
			for _, e := range appliedOverrideEvents(desired.Annotations, template.GetNamespace(), target.Name) {
				r.templateEvent(template, e)
			}
			return true, nil
		})
	}
	for ns, w := range stored {
		if keep[ns] || w.DeletionTimestamp != nil {
			continue
		}
		write(func() (bool, error) {
			if err := r.deleteWork(ctx, ns, w.Name); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			klog.FromContext(ctx).V(2).Info("Deleted Work of a cluster no longer targeted", "work", klog.KObj(w), "binding", b.describe())
			return true, nil
		})
	}
	_ = writes.Wait()
	return wrote, errors.Join(errs...)
}

func (r *syncReconciler) templateEvent(template *unstructured.Unstructured, e overrideEvent) {
	r.event(templates.Ref(template), e.eventType, e.reason, e.message)
}
