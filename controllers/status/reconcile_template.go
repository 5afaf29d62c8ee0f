package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/interpreter"
)

// template is a resource template read from the host, with the client of
// its resource.
type template struct {
	obj    *unstructured.Unstructured
	client dynamic.ResourceInterface
}

// getTemplate reads the template a binding refers to from the host. It
// returns nil when there is none: the object or its kind is gone, or the
// object is a new one with the same name (its uid differs from ref.UID).
func (c *Controller) getTemplate(ctx context.Context, ref workv1alpha2.ObjectReference) (*template, error) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	mapping, err := c.restMapping(gvk)
	if meta.IsNoMatchError(err) {
		klog.FromContext(ctx).V(2).Info("Kind of the template is not served", "gvk", gvk)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", gvk, err)
	}
	var client dynamic.ResourceInterface = c.host.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		client = c.host.Resource(mapping.Resource).Namespace(ref.Namespace)
	}
	obj, err := c.readTemplate(ctx, client, gvk, ref)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("getting %s %s: %w", ref.Kind, klog.KRef(ref.Namespace, ref.Name), err)
	}
	if ref.UID != "" && obj.GetUID() != ref.UID {
		return nil, nil
	}
	return &template{obj: obj, client: client}, nil
}

// readTemplate reads the template from the template cache when it watches
// the kind (the binding was made from that cache, so a template missing
// there is gone), and from the host otherwise. The object must not be
// modified.
func (c *Controller) readTemplate(ctx context.Context, client dynamic.ResourceInterface, gvk schema.GroupVersionKind, ref workv1alpha2.ObjectReference) (*unstructured.Unstructured, error) {
	if c.cached != nil {
		obj, err := c.cached.Get(ctx, gvk, ref.Namespace, ref.Name)
		if !errors.Is(err, templates.ErrNotWatched) {
			return obj, err
		}
	}
	return client.Get(ctx, ref.Name, metav1.GetOptions{})
}

// restMapping maps gvk, resetting a resettable mapper once when the kind is
// unknown (a CRD created since discovery was cached).
func (c *Controller) restMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		if r, ok := c.mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
			mapping, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
	}
	return mapping, err
}

// syncTemplateStatus writes the status the interpreter aggregates from
// items to the template, for kinds with an AggregateStatus hook, when it
// differs from the template's current status. Failures are recorded as
// events on the template.
func (c *Controller) syncTemplateStatus(ctx context.Context, b *binding, t *template, items []workv1alpha2.AggregatedStatusItem) error {
	if !c.interp.HookEnabled(t.obj.GroupVersionKind(), interpreter.AggregateStatus) {
		return nil
	}
	next, err := c.interp.AggregateStatus(t.obj, items)
	if err != nil {
		err = fmt.Errorf("aggregating status of %s from %s: %w", t.obj.GetKind(), b.describe, err)
		c.event(nil, t.obj, corev1.EventTypeWarning, EventReasonAggregateStatusFailed, err.Error())
		return err
	}
	patch, err := statusPatch(t.obj, next)
	if err != nil {
		return err
	}
	if string(patch) == "{}" {
		return nil // the same status
	}
	if err := writeStatus(ctx, t.client, next, patch); err != nil {
		if !apierrors.IsConflict(err) {
			c.event(nil, t.obj, corev1.EventTypeWarning, EventReasonAggregateStatusFailed, err.Error())
		}
		return err
	}
	klog.FromContext(ctx).V(2).Info("Updated template status", "template", klog.KObj(t.obj), "kind", t.obj.GetKind())
	return nil
}

// statusPatch is the JSON merge patch taking the template's status from
// what old holds to what obj holds; "{}" when they are the same.
func statusPatch(old, obj *unstructured.Unstructured) ([]byte, error) {
	from, err := json.Marshal(map[string]any{"status": old.Object["status"]})
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(map[string]any{"status": obj.Object["status"]})
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, fmt.Errorf("computing the status patch of %s %s: %w", obj.GetKind(), klog.KObj(obj), err)
	}
	return patch, nil
}

// writeStatus sends the status patch of obj through the status subresource,
// or through the main resource when the kind has none (a CRD without the
// subresource answers 404 on /status). The controller is the only writer
// of a template's status, so the patch carries no resourceVersion: a
// template changed meanwhile (labels, spec) takes it without a conflict.
// A template gone meanwhile is not an error.
func writeStatus(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured, patch []byte) error {
	opts := metav1.PatchOptions{FieldManager: ControllerName}
	_, err := client.Patch(ctx, obj.GetName(), types.MergePatchType, patch, opts, "status")
	if apierrors.IsNotFound(err) {
		_, err = client.Patch(ctx, obj.GetName(), types.MergePatchType, patch, opts)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("patching status of %s %s: %w", obj.GetKind(), klog.KObj(obj), err)
	}
	return nil
}
