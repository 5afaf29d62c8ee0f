package status

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Queue keys name a binding: "rb/<namespace>/<name>" or "crb/<name>".
const (
	rbKeyPrefix  = "rb/"
	crbKeyPrefix = "crb/"
)

func rbKey(namespace, name string) string { return rbKeyPrefix + namespace + "/" + name }

func crbKey(name string) string { return crbKeyPrefix + name }

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
	// patchStatus sends a JSON merge patch to the status subresource.
	patchStatus func(ctx context.Context, patch []byte) error
}

// getBinding returns the binding of a queue key. A missing binding returns
// the lister's NotFound error.
func (c *Controller) getBinding(key string) (*binding, error) {
	opts := metav1.PatchOptions{FieldManager: ControllerName}
	switch {
	case strings.HasPrefix(key, rbKeyPrefix):
		namespace, name, ok := strings.Cut(strings.TrimPrefix(key, rbKeyPrefix), "/")
		if !ok {
			return nil, fmt.Errorf("malformed key %q", key)
		}
		rb, err := c.rbs.ResourceBindings(namespace).Get(name)
		if err != nil {
			return nil, err
		}
		return &binding{
			obj: rb, meta: &rb.ObjectMeta, spec: &rb.Spec, status: &rb.Status, key: key,
			idLabel:  workv1alpha2.ResourceBindingPermanentIDLabel,
			describe: fmt.Sprintf("ResourceBinding(%s/%s)", namespace, name),
			patchStatus: func(ctx context.Context, patch []byte) error {
				_, err := c.client.WorkV1alpha2().ResourceBindings(namespace).Patch(ctx, name, types.MergePatchType, patch, opts, "status")
				return err
			},
		}, nil
	case strings.HasPrefix(key, crbKeyPrefix):
		name := strings.TrimPrefix(key, crbKeyPrefix)
		crb, err := c.crbs.Get(name)
		if err != nil {
			return nil, err
		}
		return &binding{
			obj: crb, meta: &crb.ObjectMeta, spec: &crb.Spec, status: &crb.Status, key: key,
			idLabel:  workv1alpha2.ClusterResourceBindingPermanentIDLabel,
			describe: fmt.Sprintf("ClusterResourceBinding(%s)", name),
			patchStatus: func(ctx context.Context, patch []byte) error {
				_, err := c.client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, name, types.MergePatchType, patch, opts, "status")
				return err
			},
		}, nil
	}
	return nil, fmt.Errorf("malformed key %q", key)
}
