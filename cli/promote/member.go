package promote

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/interpreter"
)

// MappingFor maps a kubectl resource argument (deployment, deploy,
// deployments, deployment.v1.apps, Deployment.apps, ...) to its kind and
// resource with mapper, as kubectl's resource builder does. where names
// the API server in the error of a kind it does not serve.
func MappingFor(mapper meta.RESTMapper, arg, where string) (*meta.RESTMapping, error) {
	fullySpecifiedGVR, groupResource := schema.ParseResourceArg(arg)
	var gvk schema.GroupVersionKind
	if fullySpecifiedGVR != nil {
		gvk, _ = mapper.KindFor(*fullySpecifiedGVR)
	}
	if gvk.Empty() {
		gvk, _ = mapper.KindFor(groupResource.WithVersion(""))
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	fullySpecifiedGVK, groupKind := schema.ParseKindArg(arg)
	if fullySpecifiedGVK == nil {
		k := groupKind.WithVersion("")
		fullySpecifiedGVK = &k
	}
	if !fullySpecifiedGVK.Empty() {
		if m, err := mapper.RESTMapping(fullySpecifiedGVK.GroupKind(), fullySpecifiedGVK.Version); err == nil {
			return m, nil
		}
	}
	m, err := mapper.RESTMapping(groupKind, gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("%s doesn't have a resource type %q", where, groupResource.Resource)
	}
	return m, err
}

// Member reads the objects to promote from one member cluster.
type Member struct {
	// Cluster is the member's name, for errors.
	Cluster string
	mapper  meta.RESTMapper
	client  dynamic.Interface
}

// NewMember reaches the member through getter: the control plane's
// clusters/{name}/proxy (cli/clusterproxy) or the member's own kubeconfig.
func NewMember(cluster string, getter genericclioptions.RESTClientGetter) (*Member, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster(%s): %w", cluster, err)
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("cluster(%s): %w", cluster, err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster(%s): %w", cluster, err)
	}
	return &Member{Cluster: cluster, mapper: mapper, client: client}, nil
}

// where names the member in errors, as karmadactl does.
func (m *Member) where() string { return "cluster(" + m.Cluster + ")" }

// Get reads the object name of kind (a kubectl resource argument) in
// namespace, which a cluster-scoped kind ignores.
func (m *Member) Get(ctx context.Context, kind, namespace, name string) (*unstructured.Unstructured, error) {
	mapping, err := MappingFor(m.mapper, kind, m.where())
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		namespace = ""
	}
	obj, err := m.client.Resource(mapping.Resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s %q not found in %s", mapping.GroupVersionKind.Kind, cache.NewObjectName(namespace, name).String(), m.where())
	}
	if err != nil {
		return nil, fmt.Errorf("getting %s %s from %s: %w", mapping.GroupVersionKind.Kind, cache.NewObjectName(namespace, name).String(), m.where(), err)
	}
	return obj, nil
}

// Dependency reads the objects ref names: one by name, none when it does
// not exist, or those its label selector selects.
func (m *Member) Dependency(ctx context.Context, ref interpreter.DependentObjectReference) ([]*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("dependency %s %s: %w", ref.Kind, ref.Name, err)
	}
	mapping, err := m.mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("dependency %s %s: %s: %w", ref.Kind, cache.NewObjectName(ref.Namespace, ref.Name).String(), m.where(), err)
	}
	ri := m.client.Resource(mapping.Resource).Namespace(ref.Namespace)
	if ref.Name != "" {
		obj, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("getting dependency %s %s from %s: %w", ref.Kind, cache.NewObjectName(ref.Namespace, ref.Name).String(), m.where(), err)
		}
		return []*unstructured.Unstructured{obj}, nil
	}
	if ref.LabelSelector == nil {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ref.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("dependency %s: %w", ref.Kind, err)
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("listing dependencies %s %s in %s: %w", ref.Kind, sel, m.where(), err)
	}
	out := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}
