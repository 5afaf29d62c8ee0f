package mcs

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// notListedRetry is how soon a key is tried again while a member informer
// it needs is starting or listing.
const notListedRetry = time.Second

// collectManagers are the managers of collected Works: a member's slices
// of a service are collected while it exports the service, or provides it
// to a MultiClusterService.
var collectManagers = []string{networkingv1alpha1.ManagedByServiceExport, networkingv1alpha1.ManagedByMultiClusterService}

// collectReconciler keeps the collected Works of one service in one
// member.
type collectReconciler struct {
	// cluster reads a Cluster (nil when there is none).
	cluster func(name string) (*clusterv1alpha1.Cluster, error)
	// exported tells whether the member has a ServiceExport
	// namespace/name; known is false when its informer has not listed.
	exported func(cluster, namespace, name string) (exists, known bool)
	// provided tells whether a CrossCluster MultiClusterService
	// namespace/name has the member among its provider clusters.
	provided func(cluster, namespace, name string) bool
	// slices returns the member's EndpointSlices of namespace, starting
	// their informer on first use; synced is false until it has listed.
	slices func(cluster, namespace string) (slices []*unstructured.Unstructured, synced bool)
	// works returns the Works of a service; work one Work by name.
	works func(namespace, name string) ([]*workv1alpha1.Work, error)
	work  func(namespace, name string) (*workv1alpha1.Work, bool)
	write worksWriter
	// host keeps the control plane's copies of the slices a ServiceExport
	// exports.
	host hostSliceReconciler

	// serviceExport reads a member's ServiceExport (nil when none).
	serviceExport func(cluster, namespace, name string) *unstructured.Unstructured
	// service reads a member's Service, starting its informer on first
	// use; synced is false until it has listed.
	service func(cluster, namespace, name string) (svc *unstructured.Unstructured, synced bool)
	// exporters are the members with a ServiceExport namespace/name.
	exporters func(namespace, name string) []string
	// exportStatus writes the conditions of a member's ServiceExport.
	exportStatus func(ctx context.Context, cluster string, se *unstructured.Unstructured, conditions []metav1.Condition) error
	// event records an event on a ServiceExport template.
	event func(ref *corev1.ObjectReference, eventType, reason, message string)
}

// reconcile makes the collected Works of service namespace/name in
// clusterName hold the member's EndpointSlices of the service while the
// member is Ready and exports it or provides it to a MultiClusterService,
// and nothing otherwise; and the host's copies of those slices exist while
// the member exports the service with a ServiceExport (as in Karmada, a
// MultiClusterService's providers get none). retry > 0 asks for
// the key again then: a member informer it needs has not listed yet.
func (r *collectReconciler) reconcile(ctx context.Context, clusterName, namespace, name string) (retry time.Duration, _ error) {
	all, err := r.works(namespace, name)
	if err != nil {
		return 0, err
	}
	es := names.ExecutionNamespace(clusterName)
	var existing []*workv1alpha1.Work
	for _, w := range all {
		if w.Namespace == es && plan.IsCollected(w, "") {
			existing = append(existing, w)
		}
	}
	cl, err := r.cluster(clusterName)
	if err != nil {
		return 0, err
	}
	var desired []*workv1alpha1.Work
	var onHost []*discoveryv1.EndpointSlice
	if clusterReady(cl) {
		var managers []string
		exists, known := r.exported(clusterName, namespace, name)
		if !known {
			if member.Serves(cl, multiclusterv1alpha1.ServiceExports) {
				// The hub is starting the member's ServiceExport informer.
				return notListedRetry, nil
			}
			// The member serves no ServiceExports: it exports nothing.
			exists = false
		}
		if exists {
			managers = append(managers, networkingv1alpha1.ManagedByServiceExport)
		}
		if r.provided(clusterName, namespace, name) {
			managers = append(managers, networkingv1alpha1.ManagedByMultiClusterService)
		}
		if len(managers) > 0 {
			memberSlices, synced := r.slices(clusterName, namespace)
			if !synced {
				return notListedRetry, nil
			}
			for _, s := range memberSlices {
				if !plan.Collectable(s.GetLabels(), name) {
					continue
				}
				w, err := plan.CollectedWork(clusterName, s, managers...)
				if err != nil {
					return 0, err
				}
				desired = append(desired, w)
				if exists {
					h, err := plan.HostSlice(plan.Collected{Cluster: clusterName, Slice: s})
					if err != nil {
						return 0, err
					}
					onHost = append(onHost, h)
				}
			}
		}
	}
	changes, err := plan.Reconcile(collectManagers, desired, withNamed(existing, desired, r.work),
		networkingv1alpha1.EndpointSliceNamespaceLabel, networkingv1alpha1.EndpointSliceNameLabel)
	if err != nil {
		return 0, err
	}
	_, err = r.write.apply(ctx, changes)
	err = errors.Join(err, r.host.reconcile(ctx, clusterName, namespace, name, onHost))
	if err != nil || !clusterReady(cl) {
		return 0, err
	}
	return r.report(ctx, clusterName, namespace, name)
}

// report sets the conditions of the member's ServiceExport (Valid: the
// Service exists; Conflict: its ports agree with the other exporters'),
// when they change, with an event on the template for each condition
// turning bad or good again.
func (r *collectReconciler) report(ctx context.Context, cluster, namespace, name string) (retry time.Duration, _ error) {
	se := r.serviceExport(cluster, namespace, name)
	if se == nil || !appliedByFlotilla(se) {
		return 0, nil
	}
	svc, synced := r.service(cluster, namespace, name)
	if !synced {
		return notListedRetry, nil
	}
	var own *plan.Exported
	if svc != nil {
		spec, _ := svc.Object["spec"].(map[string]any)
		own = &plan.Exported{Cluster: cluster, Ports: plan.ServicePorts(spec)}
	}
	var others []plan.Exported
	for _, o := range r.exporters(namespace, name) {
		if o == cluster {
			continue
		}
		if s, ok := r.service(o, namespace, name); ok && s != nil {
			spec, _ := s.Object["spec"].(map[string]any)
			others = append(others, plan.Exported{Cluster: o, Ports: plan.ServicePorts(spec)})
		}
	}
	want := plan.ExportConditions(cluster, namespace, name, own, others)
	cur := statusConditions(se)
	conds, changed := plan.MergeConditions(cur, want)
	if len(changed) == 0 {
		return 0, nil
	}
	if err := r.exportStatus(ctx, cluster, se, conds); err != nil {
		return 0, err
	}
	ref := templateRef(se, multiclusterv1alpha1.ServiceExportKind)
	for _, c := range changed {
		bad := (c.Type == multiclusterv1alpha1.ServiceExportValid) == (c.Status == metav1.ConditionFalse)
		switch {
		case bad:
			r.event(ref, corev1.EventTypeWarning, c.Reason, fmt.Sprintf("cluster %s: %s", cluster, c.Message))
		case len(cur) > 0:
			r.event(ref, corev1.EventTypeNormal, c.Reason, fmt.Sprintf("cluster %s: %s", cluster, c.Message))
		}
	}
	return 0, nil
}

// statusConditions reads the status.conditions of a member object.
func statusConditions(u *unstructured.Unstructured) []metav1.Condition {
	raw, found, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil || !found {
		return nil
	}
	var out []metav1.Condition
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		c := metav1.Condition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err == nil {
			out = append(out, c)
		}
	}
	return out
}
