package plan

import (
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/types"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// CrossCluster tells whether mcs exposes its Service to other clusters.
func CrossCluster(mcs *networkingv1alpha1.MultiClusterService) bool {
	return slices.Contains(mcs.Spec.Types, networkingv1alpha1.ExposureTypeCrossCluster)
}

// Named is the clusters a MultiClusterService names: All when it names
// none (empty means every cluster), else Names, sorted and without
// duplicates.
type Named struct {
	All   bool
	Names []string
}

// Has tells whether cluster is among the clusters named.
func (n Named) Has(cluster string) bool {
	return n.All || slices.Contains(n.Names, cluster)
}

// In returns the clusters of known that are named, sorted.
func (n Named) In(known []string) []string {
	var out []string
	for _, c := range known {
		if n.Has(c) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Unknown returns the clusters named that are not in known.
func (n Named) Unknown(known []string) []string {
	var out []string
	for _, c := range n.Names {
		if !slices.Contains(known, c) {
			out = append(out, c)
		}
	}
	return out
}

func named(sel []networkingv1alpha1.ClusterSelector, deprecated ...[]string) Named {
	var n []string
	for _, s := range sel {
		n = append(n, s.Name)
	}
	for _, d := range deprecated {
		if len(n) > 0 {
			break
		}
		n = append(n, d...)
	}
	sort.Strings(n)
	n = slices.Compact(n)
	return Named{All: len(n) == 0, Names: n}
}

// Providers are the clusters whose endpoints back mcs's Service:
// providerClusters, or the deprecated serviceProvisionClusters when it is
// empty.
func Providers(mcs *networkingv1alpha1.MultiClusterService) Named {
	return named(mcs.Spec.ProviderClusters, mcs.Spec.ServiceProvisionClusters)
}

// Consumers are the clusters mcs's Service is exposed to:
// consumerClusters, or the deprecated serviceConsumptionClusters and
// range.clusterNames when it is empty.
func Consumers(mcs *networkingv1alpha1.MultiClusterService) Named {
	return named(mcs.Spec.ConsumerClusters, mcs.Spec.ServiceConsumptionClusters, mcs.Spec.Range.ClusterNames)
}

// DispatchWorks returns the Works giving consumer the endpoints of
// service namespace/name collected from the other clusters in from: each
// slice as <provider>-<slice> (Karmada's name), labelled with the Service
// itself (which MultiClusterService propagates to the consumer: no derived
// Service), managed by the dispatch, and annotated with its provider.
func DispatchWorks(consumer, namespace, name string, from []Collected) ([]*workv1alpha1.Work, error) {
	ns := names.ExecutionNamespace(consumer)
	var out []*workv1alpha1.Work
	for _, c := range sortedCollected(from) {
		if c.Cluster == consumer {
			continue // its own endpoints are its own EndpointSlice controller's
		}
		obj := dispatchedSlice(c, c.Cluster+"-"+c.Slice.GetName(), namespace, name)
		w, err := dispatchedWork(ns, namespace, name, networkingv1alpha1.ManagedByMultiClusterService, obj, c.Cluster)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// ServiceBinding is what a MultiClusterService makes of its Service's
// binding, as Karmada's multiclusterservice controller does: the Service
// is propagated, whole, to the providers and the consumers (clusters
// sorted), its conflicts overwritten, and the binding says which
// MultiClusterService keeps it.
type ServiceBinding struct {
	Labels, Annotations map[string]string
	Spec                workv1alpha2.ResourceBindingSpec
}

// BindService returns the binding of Service namespace/name (uid,
// resourceVersion) that mcs propagates to clusters.
func BindService(mcs *networkingv1alpha1.MultiClusterService, uid, resourceVersion string, clusters []string) ServiceBinding {
	cs := slices.Clone(clusters)
	sort.Strings(cs)
	cs = slices.Compact(cs)
	return ServiceBinding{
		Labels: map[string]string{
			workv1alpha2.BindingManagedByLabel:                     networkingv1alpha1.MultiClusterServiceKind,
			networkingv1alpha1.MultiClusterServicePermanentIDLabel: mcs.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel],
		},
		Annotations: map[string]string{
			networkingv1alpha1.MultiClusterServiceNameAnnotation:      mcs.Name,
			networkingv1alpha1.MultiClusterServiceNamespaceAnnotation: mcs.Namespace,
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: ServiceKind, Namespace: mcs.Namespace, Name: mcs.Name,
				UID: types.UID(uid), ResourceVersion: resourceVersion},
			Placement:          &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: cs}},
			ConflictResolution: policyv1alpha1.ConflictOverwrite,
			SchedulerName:      "default-scheduler",
		},
	}
}
