package mcs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// dispatchReconciler keeps the Works of one service in the members
// importing it.
type dispatchReconciler struct {
	clusters func() ([]*clusterv1alpha1.Cluster, error)
	// serviceImport reads a member's ServiceImport namespace/name (nil
	// when it has none); state says whether its informer has listed.
	serviceImport func(cluster, namespace, name string) (*unstructured.Unstructured, informerState)
	works         func(namespace, name string) ([]*workv1alpha1.Work, error)
	work          func(namespace, name string) (*workv1alpha1.Work, bool)
	write         worksWriter
	// event records an event on a ServiceImport template.
	event func(ref *corev1.ObjectReference, eventType, reason, message string)
	// importStatus writes the status.clusters of a member's ServiceImport.
	importStatus func(ctx context.Context, cluster string, si *unstructured.Unstructured, clusters []string) error
	now          func() time.Time
}

// informerState is how far a member informer is.
type informerState int

const (
	// notRunning: the hub runs no such informer in the member (it is not
	// Ready, does not serve the kind, or is being started).
	notRunning informerState = iota
	// listing: it runs and has not listed yet.
	listing
	// listed: what it holds is the member's.
	listed
)

// reconcile gives every member where Flotilla applied a ServiceImport
// namespace/name the derived Service and the collected EndpointSlices of
// the service, and takes them from the members where it no longer is. A
// member whose ServiceImports cannot be read keeps what it has. retry > 0
// asks for the key again then: a member's informer has not listed yet.
func (r *dispatchReconciler) reconcile(ctx context.Context, namespace, name string) (retry time.Duration, _ error) {
	all, err := r.works(namespace, name)
	if err != nil {
		return 0, err
	}
	var collected []plan.Collected
	dispatched := map[string][]*workv1alpha1.Work{}
	for _, w := range all {
		if c, ok := plan.CollectedFrom(w, networkingv1alpha1.ManagedByServiceExport); ok {
			collected = append(collected, c)
		}
		if cluster, ok := names.ClusterOf(w.Namespace); ok && plan.ManagedBy(w, networkingv1alpha1.ManagedByServiceImport) {
			dispatched[cluster] = append(dispatched[cluster], w)
		}
	}
	clusters, err := r.clusters()
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, cl := range clusters {
		if cl.DeletionTimestamp != nil {
			continue // its execution namespace goes, and its Works with it
		}
		obj, state := r.serviceImport(cl.Name, namespace, name)
		switch {
		case state == listed:
		case clusterReady(cl) && !member.Serves(cl, multiclusterv1alpha1.ServiceImports):
			obj = nil // the member serves no ServiceImports: it imports nothing
		case state == listing || clusterReady(cl):
			retry = notListedRetry
			continue
		default:
			continue // not Ready: what it has waits for it
		}
		if obj != nil && !appliedByFlotilla(obj) {
			obj = nil
		}
		if obj == nil && len(dispatched[cl.Name]) == 0 {
			continue
		}
		if err := r.dispatch(ctx, cl.Name, obj, collected, dispatched[cl.Name]); err != nil {
			errs = append(errs, err)
			continue
		}
		if obj != nil {
			wait, err := r.report(ctx, cl.Name, obj, collected)
			if err != nil {
				errs = append(errs, err)
			}
			if wait > 0 && (retry == 0 || wait < retry) {
				retry = wait
			}
		}
	}
	return retry, errors.Join(errs...)
}

// exportGrace is how long an import may wait for its first exporter
// before it is reported as exported by no cluster: the ServiceExport and
// the ServiceImport are usually applied together, and the collection
// takes a moment.
const exportGrace = 10 * time.Second

// report writes the exporting clusters (those endpoints were collected
// from) into importer's ServiceImport status.clusters when they change,
// and warns on the template when no cluster exports the service.
func (r *dispatchReconciler) report(ctx context.Context, importer string, si *unstructured.Unstructured, collected []plan.Collected) (retry time.Duration, _ error) {
	want := []string{}
	for _, c := range collected {
		want = append(want, c.Cluster)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	cur, found := statusClusters(si)
	if found && slices.Equal(cur, want) {
		return 0, nil
	}
	if len(want) == 0 {
		if age := r.now().Sub(si.GetCreationTimestamp().Time); age < exportGrace {
			return exportGrace - age, nil
		}
	}
	if err := r.importStatus(ctx, importer, si, want); err != nil {
		return 0, err
	}
	if len(want) == 0 {
		r.event(templateRef(si, multiclusterv1alpha1.ServiceImportKind), corev1.EventTypeWarning, EventReasonServiceNotExported,
			fmt.Sprintf("No cluster exports Service %s/%s: derived-%s in cluster %s has no endpoints", si.GetNamespace(), si.GetName(), si.GetName(), importer))
	}
	return 0, nil
}

// statusClusters reads the status.clusters of a ServiceImport; found is
// false when it has none written.
func statusClusters(si *unstructured.Unstructured) (clusters []string, found bool) {
	raw, found, err := unstructured.NestedSlice(si.Object, "status", "clusters")
	if err != nil || !found {
		return nil, false
	}
	out := []string{}
	for _, r := range raw {
		if m, ok := r.(map[string]any); ok {
			if c, ok := m["cluster"].(string); ok {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out, true
}

// appliedByFlotilla tells whether a member's ServiceImport is one Flotilla
// applied (propagated from a template) and is not going: only those are
// acted upon, as Karmada acts only on its control plane's. A ServiceImport
// another MCS implementation made in the member is not Flotilla's to
// serve.
func appliedByFlotilla(u *unstructured.Unstructured) bool {
	return u.GetDeletionTimestamp() == nil && u.GetLabels()[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue
}

// dispatch makes the Works of importer match si (nil: no import).
func (r *dispatchReconciler) dispatch(ctx context.Context, importer string, si *unstructured.Unstructured, collected []plan.Collected, existing []*workv1alpha1.Work) error {
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("importer", importer))
	var desired []*workv1alpha1.Work
	if si != nil {
		parsed, err := plan.ParseServiceImport(si)
		if err == nil {
			desired, err = plan.ImportWorks(importer, parsed, collected)
		}
		if err != nil {
			r.event(templateRef(si, multiclusterv1alpha1.ServiceImportKind), corev1.EventTypeWarning, EventReasonSyncDerivedServiceFailed, err.Error())
			return err
		}
	}
	changes, err := plan.Reconcile([]string{networkingv1alpha1.ManagedByServiceImport}, desired, withNamed(existing, desired, r.work))
	if err != nil {
		return err
	}
	written, err := r.write.apply(ctx, changes)
	if si == nil {
		return err
	}
	derived := names.WorkName(plan.ServiceKind, names.DerivedServiceName(si.GetName()), si.GetNamespace())
	if err != nil {
		r.event(templateRef(si, multiclusterv1alpha1.ServiceImportKind), corev1.EventTypeWarning, EventReasonSyncDerivedServiceFailed,
			fmt.Sprintf("Sync derived service for serviceImport(%s) in cluster %s failed: %v", si.GetName(), importer, err))
		return err
	}
	for _, c := range changes.Conflicts {
		if c.Name == derived {
			r.event(templateRef(si, multiclusterv1alpha1.ServiceImportKind), corev1.EventTypeWarning, EventReasonSyncDerivedServiceFailed,
				fmt.Sprintf("Work %s/%s of the derived service exists and is not Flotilla's", c.Namespace, c.Name))
		}
	}
	for _, w := range written {
		if w.Name == derived {
			r.event(templateRef(si, multiclusterv1alpha1.ServiceImportKind), corev1.EventTypeNormal, EventReasonSyncDerivedServiceSucceed,
				fmt.Sprintf("Sync derived service for serviceImport(%s) in cluster %s succeed.", si.GetName(), importer))
		}
	}
	return nil
}

// templateRef refers to the template a member's ServiceImport or
// ServiceExport (of kind) was applied from: events go to the control
// plane's object, where users look.
func templateRef(u *unstructured.Unstructured, kind string) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: multiclusterv1alpha1.SchemeGroupVersion.String(), Kind: kind,
		Namespace: u.GetNamespace(), Name: u.GetName(), UID: types.UID(u.GetAnnotations()[workv1alpha2.ResourceTemplateUIDAnnotation])}
}
