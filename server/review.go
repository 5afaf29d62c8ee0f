package server

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/explainapi"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/interpreter/informed"
	"github.com/flotilla-io/flotilla/interpreter/lua"
	"github.com/flotilla-io/flotilla/selectors"
)

// interpretation is the process's resource interpreter, built once over
// the server's informers for dry-run placement and the embedded
// controllers alike (each customization compiled once per process).
type interpretation struct {
	customizations *lua.Customizations
	interpreter    interpreter.Interpreter
	synced         []cache.InformerSynced
	// host holds the host's Services (for interpreter webhooks) and
	// PriorityClasses (for dry-run placement's schedulePriority).
	priorityClass func(name string) (int32, error)
}

// newInterpretation builds the interpreter over factory and a host
// informer factory of its own, started once the server serves.
func (c CompletedConfig) newInterpretation(g *genericapiserver.GenericAPIServer, factory externalversions.SharedInformerFactory) (*interpretation, error) {
	host := informers.NewSharedInformerFactory(c.Host, 0)
	customizations, interp, synced, err := informed.New(factory, host)
	if err != nil {
		return nil, err
	}
	pcs := host.Scheduling().V1().PriorityClasses()
	pcs.Informer() // registered before the factory starts
	err = g.AddPostStartHook("start-interpreter-host-informers", func(hctx genericapiserver.PostStartHookContext) error {
		host.Start(hctx.Done())
		return nil
	})
	return &interpretation{customizations: customizations, interpreter: interp, synced: synced,
		priorityClass: func(name string) (int32, error) {
			pc, err := pcs.Lister().Get(name)
			if err != nil {
				return 0, err
			}
			return pc.Value, nil
		}}, err
}

// reviewConfig is dry-run placement's configuration but for the
// registry's storages (reviewStorage adds those).
func (c CompletedConfig) reviewConfig(explain explainapi.Config, interp *interpretation) (explainapi.ReviewConfig, error) {
	// A review's dry-run applies go one after another, as many as its
	// templates (at most 1,000): client-go's default 5 requests/s would
	// make a review of 100 take 20 s.
	host := restclient.CopyConfig(c.HostConfig)
	host.QPS, host.Burst = -1, 0
	dc, err := dynamic.NewForConfig(host)
	if err != nil {
		return explainapi.ReviewConfig{}, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(host)
	if err != nil {
		return explainapi.ReviewConfig{}, err
	}
	components := c.Controllers.MultiplePodTemplatesScheduling
	return explainapi.ReviewConfig{
		Clusters: explain.Clusters,
		Estimate: explain.Estimate,
		Workload: func(gvk schema.GroupVersionKind) selectors.Workload {
			w := interpreter.Workload(interp.interpreter, gvk, components)
			w.PriorityClass = interp.priorityClass
			return w
		},
		Templates:  explainapi.HostTemplates{Client: dc, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))},
		Authorizer: c.generic.Authorization.Authorizer,
	}, nil
}

// reviewStorage is the placementreviews storage over the policy and work
// groups' storages (by resource).
func reviewStorage(cfg explainapi.ReviewConfig, policies, work map[string]rest.Storage) (rest.Storage, error) {
	list := func(ctx context.Context, resource string) (runtime.Object, error) {
		l, ok := policies[resource].(rest.Lister)
		if !ok {
			return nil, fmt.Errorf("the %s storage cannot list", resource)
		}
		// The watch cache's copy, as an informer would hold it.
		return l.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll), &metainternalversion.ListOptions{ResourceVersion: "0"})
	}
	cfg.Policies = func(ctx context.Context) (pps, cpps []*selectors.Policy, err error) {
		obj, err := list(ctx, "propagationpolicies")
		if err != nil {
			return nil, nil, err
		}
		for i := range obj.(*policyv1alpha1.PropagationPolicyList).Items {
			if p := &obj.(*policyv1alpha1.PropagationPolicyList).Items[i]; p.DeletionTimestamp == nil {
				pps = append(pps, selectors.FromPP(p))
			}
		}
		if obj, err = list(ctx, "clusterpropagationpolicies"); err != nil {
			return nil, nil, err
		}
		for i := range obj.(*policyv1alpha1.ClusterPropagationPolicyList).Items {
			if p := &obj.(*policyv1alpha1.ClusterPropagationPolicyList).Items[i]; p.DeletionTimestamp == nil {
				cpps = append(cpps, selectors.FromCPP(p))
			}
		}
		return pps, cpps, nil
	}
	cfg.Overrides = func(ctx context.Context) (cops []*policyv1alpha1.ClusterOverridePolicy, ops []*policyv1alpha1.OverridePolicy, err error) {
		obj, err := list(ctx, "clusteroverridepolicies")
		if err != nil {
			return nil, nil, err
		}
		for i := range obj.(*policyv1alpha1.ClusterOverridePolicyList).Items {
			cops = append(cops, &obj.(*policyv1alpha1.ClusterOverridePolicyList).Items[i])
		}
		if obj, err = list(ctx, "overridepolicies"); err != nil {
			return nil, nil, err
		}
		for i := range obj.(*policyv1alpha1.OverridePolicyList).Items {
			ops = append(ops, &obj.(*policyv1alpha1.OverridePolicyList).Items[i])
		}
		return cops, ops, nil
	}
	cfg.Quotas = func(ctx context.Context, namespace string) (map[string]corev1.ResourceList, error) {
		l, ok := policies["federatedresourcequotas"].(rest.Lister)
		if !ok {
			return nil, fmt.Errorf("the federatedresourcequotas storage cannot list")
		}
		obj, err := l.List(genericapirequest.WithNamespace(ctx, namespace), &metainternalversion.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		out := map[string]corev1.ResourceList{}
		for _, q := range obj.(*policyv1alpha1.FederatedResourceQuotaList).Items {
			out[q.Name] = q.Spec.Overall
		}
		return out, nil
	}
	rbList, ok := work["resourcebindings"].(rest.Lister)
	if !ok {
		return nil, fmt.Errorf("the resourcebindings storage cannot list")
	}
	cfg.NamespaceBindings = func(ctx context.Context, namespace string) ([]*workv1alpha2.ResourceBinding, error) {
		obj, err := rbList.List(genericapirequest.WithNamespace(ctx, namespace), &metainternalversion.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		list := obj.(*workv1alpha2.ResourceBindingList)
		out := make([]*workv1alpha2.ResourceBinding, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
		return out, nil
	}
	rbs, ok := work["resourcebindings"].(rest.Getter)
	crbs, ok2 := work["clusterresourcebindings"].(rest.Getter)
	if !ok || !ok2 {
		return nil, fmt.Errorf("the binding storages cannot get")
	}
	cfg.Binding = func(ctx context.Context, namespace, name string) (*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus, bool, error) {
		st := rbs
		if namespace == "" {
			st = crbs
		}
		obj, err := st.Get(genericapirequest.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil, false, nil
		case err != nil:
			return nil, nil, false, err
		}
		switch b := obj.(type) {
		case *workv1alpha2.ResourceBinding:
			return &b.Spec, &b.Status, true, nil
		case *workv1alpha2.ClusterResourceBinding:
			return &b.Spec, &b.Status, true, nil
		}
		return nil, nil, false, fmt.Errorf("the binding storage returned %T", obj)
	}
	return explainapi.NewReviewREST(cfg), nil
}
