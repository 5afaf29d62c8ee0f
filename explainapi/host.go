package explainapi

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// ReviewFieldManager is the field manager of a review's dry-run applies.
const ReviewFieldManager = "flotilla-placement-review"

// reviewListPage is how many templates one LIST of a review returns.
const reviewListPage = 500

// HostTemplates are the resource templates of the host cluster.
type HostTemplates struct {
	Client dynamic.Interface
	Mapper meta.ResettableRESTMapper
}

var _ Templates = HostTemplates{}

// Mapping is how the host serves gvk; a kind it did not serve when last
// discovered is looked up again once.
func (h HostTemplates) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := h.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		h.Mapper.Reset()
		m, err = h.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

func (h HostTemplates) resource(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return h.Client.Resource(m.Resource).Namespace(namespace)
	}
	return h.Client.Resource(m.Resource)
}

// DryRunApply server-side applies obj with dryRun=All: the host defaults
// it and merges it with the object it would update, and stores nothing.
func (h HostTemplates) DryRunApply(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return h.resource(m, obj.GetNamespace()).Patch(ctx, obj.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: ReviewFieldManager, Force: ptr.To(true)})
}

// List pages through the templates of m in namespace.
func (h HostTemplates) List(ctx context.Context, m *meta.RESTMapping, namespace string, each func(*unstructured.Unstructured) bool) error {
	opts := metav1.ListOptions{Limit: reviewListPage}
	for {
		page, err := h.resource(m, namespace).List(ctx, opts)
		if err != nil {
			return err
		}
		for i := range page.Items {
			if !each(&page.Items[i]) {
				return nil
			}
		}
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}
