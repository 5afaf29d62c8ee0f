package mcs

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
	"github.com/flotilla-io/flotilla/member"
)

// Names of the controllers in --controllers, as in Karmada.
const (
	ServiceExportControllerName       = "serviceExport"
	ServiceImportControllerName       = "serviceImport"
	MultiClusterServiceControllerName = "multiclusterservice"
)

// FieldManager is the field manager of the controllers' writes.
const FieldManager = "flotilla-mcs"

// Reasons of the events recorded on a ServiceImport template (Karmada's
// pkg/events). Unlike Karmada, which records a success at every reconcile,
// a success is recorded only when the derived Service's Work was written.
const (
	// EventReasonSyncDerivedServiceSucceed (Normal): an importing member's
	// derived Service was written.
	EventReasonSyncDerivedServiceSucceed = "SyncDerivedServiceSucceed"
	// EventReasonSyncDerivedServiceFailed (Warning): it could not be.
	EventReasonSyncDerivedServiceFailed = "SyncDerivedServiceFailed"
	// EventReasonServiceNotExported (Warning): no cluster exports the
	// service imported (Flotilla's: Karmada says nothing).
	EventReasonServiceNotExported = "ServiceNotExported"
)

// Reasons of the events recorded on a MultiClusterService (Karmada's
// pkg/events). Unlike Karmada, which records them at every reconcile, they
// are recorded when the condition they report changes.
const (
	// EventReasonSyncServiceSucceed (Normal): the Service is propagated to
	// the providers and consumers.
	EventReasonSyncServiceSucceed = "SyncServiceSucceed"
	// EventReasonSyncServiceFailed (Warning): it is not, or not to all.
	EventReasonSyncServiceFailed = "SyncServiceFailed"
	// EventReasonDispatchEndpointSliceSucceed (Normal): the consumers have
	// the providers' endpoints.
	EventReasonDispatchEndpointSliceSucceed = "DispatchEndpointSliceSucceed"
	// EventReasonDispatchEndpointSliceFailed (Warning): not all have.
	EventReasonDispatchEndpointSliceFailed = "DispatchEndpointSliceFailed"
	// EventReasonClusterNotFound (Warning): a provider or consumer named
	// is no cluster.
	EventReasonClusterNotFound = "ClusterNotFound"
	// EventReasonAPIIncompatible (Warning): a consumer serves no
	// EndpointSlices.
	EventReasonAPIIncompatible = "APIIncompatible"
)

// endpointSlices is the resource collected from the members; their
// Services are read for the ServiceExport conditions.
var (
	endpointSlices = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
	memberServices = corev1.SchemeGroupVersion.WithResource("services")
)

// Hub is what the controllers use of the member hub: one informer per
// member and kind, shared with every other reader of the process.
type Hub interface {
	AddResource(r member.Resource, handler member.HandlerFunc) error
	Informer(cluster string, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, bool)
	Watch(cluster string, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, bool)
}

var _ Hub = (*member.Hub)(nil)

// worksByService indexes the Works of a service (collected or made for an
// importer) by "<namespace>/<name>" of the service their labels name.
const worksByService = "mcs-service"

func serviceKeyOf(w *workv1alpha1.Work) string {
	return works.OwnerKey(w, networkingv1alpha1.EndpointSliceNamespaceLabel, networkingv1alpha1.EndpointSliceNameLabel)
}

// addWorkIndex adds the worksByService index to the Work informer unless
// the other controller of the package already did.
func addWorkIndex(inf cache.SharedIndexInformer) error {
	return works.AddIndex(inf, worksByService,
		works.OwnerIndexFunc(networkingv1alpha1.EndpointSliceNamespaceLabel, networkingv1alpha1.EndpointSliceNameLabel))
}

// serviceWorks returns the Works of service namespace/name from the index.
func serviceWorks(idx cache.Indexer) func(namespace, name string) ([]*workv1alpha1.Work, error) {
	return func(namespace, name string) ([]*workv1alpha1.Work, error) {
		return works.Indexed(idx, worksByService, namespace+"/"+name)
	}
}

// workByName reads a Work from the cache.
func workByName(works cache.Indexer) func(namespace, name string) (*workv1alpha1.Work, bool) {
	return func(namespace, name string) (*workv1alpha1.Work, bool) {
		obj, ok, err := works.GetByKey(namespace + "/" + name)
		if err != nil || !ok {
			return nil, false
		}
		w, ok := obj.(*workv1alpha1.Work)
		return w, ok
	}
}

// withNamed adds to existing the Works named as desired ones, which the
// index misses when their labels are not (yet) the service's.
func withNamed(existing, desired []*workv1alpha1.Work, get func(namespace, name string) (*workv1alpha1.Work, bool)) []*workv1alpha1.Work {
	out := existing
	for _, d := range desired {
		if w, ok := get(d.Namespace, d.Name); ok {
			out = append(out, w)
		}
	}
	return out
}

// clusterReady tells whether c is Ready and not leaving.
func clusterReady(c *clusterv1alpha1.Cluster) bool {
	return c != nil && c.DeletionTimestamp == nil && meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// worksWriter writes Works to flotilla-apiserver.
type worksWriter struct {
	create func(ctx context.Context, w *workv1alpha1.Work) error
	patch  func(ctx context.Context, namespace, name string, patch []byte) error
	delete func(ctx context.Context, w *workv1alpha1.Work) error
}

func newWorksWriter(client versioned.Interface) worksWriter {
	return worksWriter{
		create: func(ctx context.Context, w *workv1alpha1.Work) error {
			_, err := client.WorkV1alpha1().Works(w.Namespace).Create(ctx, w, metav1.CreateOptions{FieldManager: FieldManager})
			return err
		},
		patch: func(ctx context.Context, namespace, name string, patch []byte) error {
			_, err := client.WorkV1alpha1().Works(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
			return err
		},
		delete: func(ctx context.Context, w *workv1alpha1.Work) error {
			return client.WorkV1alpha1().Works(w.Namespace).Delete(ctx, w.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &w.UID}})
		},
	}
}

// apply writes c. written lists the Works created or updated. A create
// that finds the Work exists, or a delete that finds it gone, means the
// cache is behind: the Work's event queues the caller again.
func (ww worksWriter) apply(ctx context.Context, c plan.Changes) (written []*workv1alpha1.Work, _ error) {
	log := klog.FromContext(ctx)
	var errs []error
	for _, w := range c.Create {
		err := ww.create(ctx, w)
		switch {
		case apierrors.IsAlreadyExists(err):
		case err != nil:
			errs = append(errs, fmt.Errorf("creating Work %s/%s: %w", w.Namespace, w.Name, err))
		default:
			log.V(2).Info("Created Work", "work", klog.KObj(w))
			written = append(written, w)
		}
	}
	for _, u := range c.Update {
		p, err := plan.Patch(u.Stored, u.Desired)
		if err == nil {
			err = ww.patch(ctx, u.Stored.Namespace, u.Stored.Name, p)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("updating Work %s/%s: %w", u.Stored.Namespace, u.Stored.Name, err))
			continue
		}
		log.V(4).Info("Updated Work", "work", klog.KObj(u.Stored))
		written = append(written, u.Desired)
	}
	for _, r := range c.Release {
		p, err := plan.ReleasePatch(r)
		if err == nil {
			err = ww.patch(ctx, r.Stored.Namespace, r.Stored.Name, p)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("releasing Work %s/%s: %w", r.Stored.Namespace, r.Stored.Name, err))
		}
	}
	for _, w := range c.Delete {
		err := ww.delete(ctx, w)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting Work %s/%s: %w", w.Namespace, w.Name, err))
		default:
			log.V(2).Info("Deleted Work", "work", klog.KObj(w))
		}
	}
	for _, w := range c.Conflicts {
		log.Info("Leaving a Work of the same name that no multi-cluster service controller keeps", "work", klog.KObj(w))
	}
	return written, errors.Join(errs...)
}
