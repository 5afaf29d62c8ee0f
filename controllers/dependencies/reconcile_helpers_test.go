package dependencies

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// fakeBindings serves stored bindings to the sub-reconcilers as plain
// functions and records their writes as "verb ns/name[ body]".
type fakeBindings struct {
	stored []*workv1alpha2.ResourceBinding
	// errs fail the writes of a verb.
	errs   map[string]error
	writes []string
}

func (f *fakeBindings) api() bindingAPI {
	return bindingAPI{
		get: func(namespace, name string) (*workv1alpha2.ResourceBinding, error) {
			for _, rb := range f.stored {
				if rb.Namespace == namespace && rb.Name == name {
					return rb, nil
				}
			}
			return nil, apierrors.NewNotFound(workv1alpha2.Resource("resourcebindings"), name)
		},
		list: func(namespace string, selector labels.Selector) ([]*workv1alpha2.ResourceBinding, error) {
			var out []*workv1alpha2.ResourceBinding
			for _, rb := range f.stored {
				if rb.Namespace == namespace && selector.Matches(labels.Set(rb.Labels)) {
					out = append(out, rb)
				}
			}
			return out, f.errs["list"]
		},
		create: func(_ context.Context, rb *workv1alpha2.ResourceBinding) error {
			f.writes = append(f.writes, "create "+rb.Namespace+"/"+rb.Name)
			return f.errs["create"]
		},
		patch: func(_ context.Context, namespace, name string, patch []byte) error {
			f.writes = append(f.writes, "patch "+namespace+"/"+name+" "+string(patch))
			return f.errs["patch"]
		},
		delete: func(_ context.Context, namespace, name string) error {
			f.writes = append(f.writes, "delete "+namespace+"/"+name)
			return f.errs["delete"]
		},
	}
}
