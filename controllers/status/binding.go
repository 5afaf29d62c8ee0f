package status

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// Queue keys name a binding (names.BindingKey).
func rbKey(namespace, name string) string { return names.BindingKey(namespace, name) }

func crbKey(name string) string { return names.BindingKey("", name) }

// binding is the part of a ResourceBinding or ClusterResourceBinding this
// controller reads and writes; both kinds share spec and status types.
type binding struct {
	// obj is the lister's object; never modified.
	obj    runtime.Object
	meta   *metav1.ObjectMeta
	spec   *workv1alpha2.ResourceBindingSpec
	status *workv1alpha2.ResourceBindingStatus
	// idLabel is the permanent-id label the binding's Works carry.
	idLabel string
	// key is the binding's queue key.
	key string
	// describe names the binding in events, as Karmada does.
	describe string
	// patchStatus sends a JSON merge patch to the status subresource and
	// returns the stored resourceVersion and status.
	patchStatus func(ctx context.Context, patch []byte) (string, *workv1alpha2.ResourceBindingStatus, error)
}

// written is what the controller's last status write of a binding stored.
type written struct {
	rv     string
	status *workv1alpha2.ResourceBindingStatus
}

// fresher returns b as this controller last wrote it when the cache still
// holds the version that write replaced: deciding on the cached copy would
// only send a write that conflicts. The lister's object is not modified.
func (c *Controller) fresher(b *binding) *binding {
	w, ok := c.written.Pending(b.key, b.meta.ResourceVersion)
	if !ok {
		return b
	}
	out := *b
	m := *b.meta
	m.ResourceVersion = w.rv
	out.meta, out.status = &m, w.status
	return &out
}

// getBinding returns the binding of a queue key. A missing binding returns
// the lister's NotFound error.
func (c *Controller) getBinding(key string) (*binding, error) {
	opts := metav1.PatchOptions{FieldManager: ControllerName}
	namespace, name, cluster, ok := names.ParseBindingKey(key)
	switch {
	case !ok:
		return nil, fmt.Errorf("malformed key %q", key)
	case !cluster:
		rb, err := c.rbs.ResourceBindings(namespace).Get(name)
		if err != nil {
			return nil, err
		}
		return &binding{
			obj: rb, meta: &rb.ObjectMeta, spec: &rb.Spec, status: &rb.Status, key: key,
			idLabel:  workv1alpha2.ResourceBindingPermanentIDLabel,
			describe: fmt.Sprintf("ResourceBinding(%s/%s)", namespace, name),
			patchStatus: func(ctx context.Context, patch []byte) (string, *workv1alpha2.ResourceBindingStatus, error) {
				out, err := c.client.WorkV1alpha2().ResourceBindings(namespace).Patch(ctx, name, types.MergePatchType, patch, opts, "status")
				if err != nil {
					return "", nil, err
				}
				return out.ResourceVersion, &out.Status, nil
			},
		}, nil
	default:
		crb, err := c.crbs.Get(name)
		if err != nil {
			return nil, err
		}
		return &binding{
			obj: crb, meta: &crb.ObjectMeta, spec: &crb.Spec, status: &crb.Status, key: key,
			idLabel:  workv1alpha2.ClusterResourceBindingPermanentIDLabel,
			describe: fmt.Sprintf("ClusterResourceBinding(%s)", name),
			patchStatus: func(ctx context.Context, patch []byte) (string, *workv1alpha2.ResourceBindingStatus, error) {
				out, err := c.client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, name, types.MergePatchType, patch, opts, "status")
				if err != nil {
					return "", nil, err
				}
				return out.ResourceVersion, &out.Status, nil
			},
		}, nil
	}
}
