package mcs

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/names"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
	"github.com/flotilla-io/flotilla/member"
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
}

// reconcile makes the collected Works of service namespace/name in
// clusterName hold the member's EndpointSlices of the service while the
// member is Ready and exports it or provides it to a MultiClusterService,
// and nothing otherwise. retry > 0 asks for
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
			slices, synced := r.slices(clusterName, namespace)
			if !synced {
				return notListedRetry, nil
			}
			for _, s := range slices {
				if !plan.Collectable(s.GetLabels(), name) {
					continue
				}
				w, err := plan.CollectedWork(clusterName, s, managers...)
				if err != nil {
					return 0, err
				}
				desired = append(desired, w)
			}
		}
	}
	changes, err := plan.Reconcile(collectManagers, desired, withNamed(existing, desired, r.work),
		networkingv1alpha1.EndpointSliceNamespaceLabel, networkingv1alpha1.EndpointSliceNameLabel)
	if err != nil {
		return 0, err
	}
	_, err = r.write.apply(ctx, changes)
	return 0, err
}
