package multiget

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// The control plane takes over an object that already runs in a member
// and holds its template (a promoted one) without writing it, so the
// object lacks the karmada.io/managed label ADOPTION reads until its
// template changes. Such an object is found from the control plane: a
// template of the same name whose binding reports it applied in that
// cluster. Only rows that would show N are looked up: one metadata list
// of the templates per resource, then a GET of the binding of each
// template that has a namesake among them, at most maxBindingReads.

// maxBindingReads bounds the bindings one get reads for ADOPTION; rows
// beyond show what their labels say.
const maxBindingReads = 100

// adoptionLookup asks the control plane about member objects that lack
// its labels.
type adoptionLookup struct {
	// templates returns which of the namespace/name keys want name
	// objects of gvr the control plane has in namespace ("": all
	// namespaces).
	templates func(ctx context.Context, gvr schema.GroupVersionResource, namespace string, want sets.Set[string]) (sets.Set[string], error)
	// appliedIn returns the clusters where the binding of the template
	// kind/namespace/name reports it applied; none when it has no binding.
	appliedIn func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (sets.Set[string], error)
}

// candidate is a member row that shows N.
type candidate struct {
	part      int
	namespace string
	name      string
}

// markTakenOver sets the TakenOver keys of the member parts. A lookup
// that fails (the caller may not read templates or bindings) leaves the
// rows as their labels say.
func (l adoptionLookup) markTakenOver(ctx context.Context, parts []Part) {
	byResource := map[schema.GroupVersionResource][]candidate{}
	var order []schema.GroupVersionResource
	for i, p := range parts {
		if p.ControlPlane || p.Table == nil || p.Mapping == nil {
			continue
		}
		for _, row := range p.Table.Rows {
			m := rowMeta(row)
			if m == nil || Adoption(m.GetLabels(), false, false) != NotAdopted {
				continue
			}
			gvr := p.Mapping.Resource
			if _, seen := byResource[gvr]; !seen {
				order = append(order, gvr)
			}
			byResource[gvr] = append(byResource[gvr], candidate{part: i, namespace: m.GetNamespace(), name: m.GetName()})
		}
	}
	reads := 0
	for _, gvr := range order {
		cands := byResource[gvr]
		namespace := cands[0].namespace
		want := sets.New[string]()
		for _, c := range cands {
			if c.namespace != namespace {
				namespace = ""
			}
			want.Insert(cache.NewObjectName(c.namespace, c.name).String())
		}
		templates, err := l.templates(ctx, gvr, namespace, want)
		if err != nil || templates.Len() == 0 {
			continue
		}
		applied := map[string]sets.Set[string]{}
		for _, c := range cands {
			key := cache.NewObjectName(c.namespace, c.name).String()
			if !templates.Has(key) {
				continue
			}
			clusters, read := applied[key]
			if !read {
				if reads >= maxBindingReads {
					continue
				}
				reads++
				clusters, err = l.appliedIn(ctx, parts[c.part].Mapping.GroupVersionKind, c.namespace, c.name)
				if err != nil {
					clusters = nil
				}
				applied[key] = clusters
			}
			p := &parts[c.part]
			if clusters.Has(p.Cluster) {
				if p.TakenOver == nil {
					p.TakenOver = sets.New[string]()
				}
				p.TakenOver.Insert(key)
			}
		}
	}
}

// newAdoptionLookup reads the control plane of cp as the caller.
func newAdoptionLookup(cp genericclioptions.RESTClientGetter) (adoptionLookup, error) {
	cfg, err := cp.ToRESTConfig()
	if err != nil {
		return adoptionLookup{}, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return adoptionLookup{}, err
	}
	karmada, err := versioned.NewForConfig(cfg)
	if err != nil {
		return adoptionLookup{}, err
	}
	return adoptionLookup{
		templates: func(ctx context.Context, gvr schema.GroupVersionResource, namespace string, want sets.Set[string]) (sets.Set[string], error) {
			keys := sets.New[string]()
			opts := metav1.ListOptions{Limit: defaultChunkSize}
			for {
				list, err := md.Resource(gvr).Namespace(namespace).List(ctx, opts)
				if err != nil {
					return nil, err
				}
				for _, o := range list.Items {
					if key := cache.NewObjectName(o.Namespace, o.Name).String(); want.Has(key) {
						keys.Insert(key)
					}
				}
				if opts.Continue = list.Continue; opts.Continue == "" {
					return keys, nil
				}
			}
		},
		appliedIn: func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (sets.Set[string], error) {
			bindingName := names.BindingName(gvk.Kind, name)
			var spec workv1alpha2.ResourceBindingSpec
			var status workv1alpha2.ResourceBindingStatus
			if namespace == "" {
				crb, err := karmada.WorkV1alpha2().ClusterResourceBindings().Get(ctx, bindingName, metav1.GetOptions{})
				if err != nil {
					return nil, ignoreNotFound(err)
				}
				spec, status = crb.Spec, crb.Status
			} else {
				rb, err := karmada.WorkV1alpha2().ResourceBindings(namespace).Get(ctx, bindingName, metav1.GetOptions{})
				if err != nil {
					return nil, ignoreNotFound(err)
				}
				spec, status = rb.Spec, rb.Status
			}
			if spec.Resource.Kind != gvk.Kind || spec.Resource.Name != name || spec.Resource.Namespace != namespace {
				return nil, nil
			}
			return appliedClusters(spec, status), nil
		},
	}, nil
}

// appliedClusters are the clusters a binding targets and reports its
// template applied in, with the object the control plane manages there
// (not one it left alone: conflictResolution Abort fails the apply).
func appliedClusters(spec workv1alpha2.ResourceBindingSpec, status workv1alpha2.ResourceBindingStatus) sets.Set[string] {
	targets := sets.New[string]()
	for _, c := range spec.Clusters {
		targets.Insert(c.Name)
	}
	out := sets.New[string]()
	for _, item := range status.AggregatedStatus {
		if item.Applied && targets.Has(item.ClusterName) {
			out.Insert(item.ClusterName)
		}
	}
	return out
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
