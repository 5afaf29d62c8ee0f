// Package explainapi serves the explain subresource of ResourceBindings and
// ClusterResourceBindings (GET .../resourcebindings/{name}/explain): a
// flotilla.io/v1alpha1 PlacementExplanation computed on each read by the
// scheduler's own algorithm (placement.Explain) over the clusters as this
// replica's informer holds them, the members' estimates from the member
// hub, and the binding's workload affinity peers. Nothing is stored and
// nothing is written. It plugs into the work.karmada.io group as the
// registry's storages do (server.apiGroups).
package explainapi

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/placement"
)

// Estimator tells how many more replicas with req cluster can run in
// namespace, by the members' own nodes, pods and quotas; ok is false when
// it does not know.
type Estimator func(cluster, namespace string, req *workv1alpha2.ReplicaRequirements) (n int64, ok bool)

// Config is what explaining needs.
type Config struct {
	// Clusters lists every Cluster.
	Clusters func() ([]*clusterv1alpha1.Cluster, error)
	// Estimate is the accurate estimator; nil: the resource summaries.
	Estimate Estimator
}

// Storages returns the explain subresources of the binding storages, by
// their resource paths ("resourcebindings/explain", ...): bindings are the
// work.karmada.io storages by resource.
func (c Config) Storages(bindings map[string]rest.Storage) (map[string]rest.Storage, error) {
	out := map[string]rest.Storage{}
	for _, resource := range []string{"resourcebindings", "clusterresourcebindings"} {
		getter, ok := bindings[resource].(rest.Getter)
		if !ok {
			return nil, fmt.Errorf("the %s storage cannot get", resource)
		}
		lister, _ := bindings[resource].(rest.Lister)
		out[resource+"/"+flotillav1alpha1.ExplainSubresource] = &REST{cfg: c, bindings: getter, peers: lister}
	}
	return out, nil
}

// REST is the explain subresource of one binding kind.
type REST struct {
	cfg      Config
	bindings rest.Getter
	// peers lists the bindings of a namespace (workload affinity); nil for
	// ClusterResourceBindings.
	peers rest.Lister
}

var (
	_ rest.Getter                   = &REST{}
	_ rest.GroupVersionKindProvider = &REST{}
)

// New returns an empty PlacementExplanation.
func (r *REST) New() runtime.Object { return &flotillav1alpha1.PlacementExplanation{} }

// Destroy releases nothing.
func (r *REST) Destroy() {}

// GroupVersionKind is the kind the subresource answers with, whatever the
// version of the binding asked.
func (r *REST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return flotillav1alpha1.SchemeGroupVersion.WithKind(flotillav1alpha1.PlacementExplanationKind)
}

// Get explains the placement of binding name.
func (r *REST) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.bindings.Get(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	var spec *workv1alpha2.ResourceBindingSpec
	var status *workv1alpha2.ResourceBindingStatus
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		spec, status = &b.Spec, &b.Status
	case *workv1alpha2.ClusterResourceBinding:
		spec, status = &b.Spec, &b.Status
	default:
		return nil, apierrors.NewInternalError(fmt.Errorf("the binding storage returned %T", obj))
	}
	clusters, err := r.cfg.Clusters()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	clusters = slices.Clone(clusters)
	slices.SortFunc(clusters, func(a, b *clusterv1alpha1.Cluster) int { return cmp.Compare(a.Name, b.Name) })
	in := placement.Input{Spec: spec, Status: status, Clusters: clusters}
	out := &flotillav1alpha1.PlacementExplanation{
		TypeMeta:   metav1.TypeMeta{APIVersion: flotillav1alpha1.SchemeGroupVersion.String(), Kind: flotillav1alpha1.PlacementExplanationKind},
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion()},
		Template:   template(spec.Resource),
		Estimator:  flotillav1alpha1.EstimatorResourceSummary,
		Division:   placement.Division(spec),
	}
	if r.cfg.Estimate != nil {
		in.Estimate = estimator(r.cfg.Estimate, spec)
		out.Estimator = flotillav1alpha1.EstimatorAccurate
	}
	if in.Affinity, in.AntiAffinity, err = r.peerClusters(ctx, m, spec); err != nil {
		return nil, err
	}
	var dec placement.Decision
	out.Clusters, dec, _ = placement.Explain(in)
	out.AffinityName = dec.AffinityName
	if c := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled); c != nil {
		out.Scheduled, out.Message = c.Status == metav1.ConditionTrue, c.Message
		if len(spec.Clusters) > 0 && status.SchedulerObservedAffinityName != "" {
			out.AffinityName = status.SchedulerObservedAffinityName
		}
	} else {
		out.Message = "The binding has never been scheduled: the clusters below say what scheduling it would find now."
	}
	return out, nil
}

// template names a binding's resource template.
func template(ref workv1alpha2.ObjectReference) string {
	name := ref.Name
	if ref.Namespace != "" {
		name = ref.Namespace + "/" + name
	}
	return ref.APIVersion + " " + ref.Kind + " " + name
}

// peerClusters are the clusters the binding's workload affinity peers run
// on, as the scheduler reads them.
func (r *REST) peerClusters(ctx context.Context, m metav1.Object, spec *workv1alpha2.ResourceBindingSpec) (affinity, antiAffinity map[string]bool, err error) {
	g := spec.WorkloadAffinityGroups
	if g == nil || m.GetNamespace() == "" || r.peers == nil {
		return nil, nil, nil
	}
	obj, err := r.peers.List(genericapirequest.WithNamespace(ctx, m.GetNamespace()), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, nil, err
	}
	list, ok := obj.(*workv1alpha2.ResourceBindingList)
	if !ok {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("listing resourcebindings returned %T", obj))
	}
	affinity, antiAffinity = placement.Peers(m.GetName(), g, func(yield func(*workv1alpha2.ResourceBinding) bool) {
		for i := range list.Items {
			if !yield(&list.Items[i]) {
				return
			}
		}
	})
	return affinity, antiAffinity, nil
}
