package hpascaletargetmarker

import (
	"context"
	"encoding/json"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
)

// action is what a queued key asks for the label of a scale target.
type action string

const (
	// mark adds the retain-replicas label.
	mark action = "mark"
	// unmark removes it.
	unmark action = "unmark"
)

// propagated tells whether the HPA has been propagated. As in Karmada, that
// is a PropagationPolicy claim (its permanent-id label): an HPA claimed by
// a ClusterPropagationPolicy does not mark its target.
func propagated(hpa *autoscalingv2.HorizontalPodAutoscaler) bool {
	_, ok := hpa.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]
	return ok
}

// scaledBy tells whether a propagated HPA among hpas, not being deleted,
// scales ref.
func scaledBy(hpas []*autoscalingv2.HorizontalPodAutoscaler, ref autoscalingv2.CrossVersionObjectReference) bool {
	for _, hpa := range hpas {
		if hpa.DeletionTimestamp == nil && propagated(hpa) && hpa.Spec.ScaleTargetRef == ref {
			return true
		}
	}
	return false
}

// stale tells whether a queued action no longer applies: a mark when no
// propagated HPA scales the target any more, an unmark when one does.
//
// Karmada hands each event to its worker with the HPA it came from and
// carries it out as is; here keys are deduplicated and retried out of
// order, so the action is checked against the HPAs cached now. The one
// visible difference: when two propagated HPAs scale the same target,
// deleting one keeps the label (Karmada drops it until the other HPA's
// next update).
func stale(a action, scaled bool) bool {
	return (a == mark) != scaled
}

// labelPatch returns the JSON merge patch that carries out a on a target
// with labels, or nil when the target is already as wanted. Like Karmada's
// it touches only the one label: mark sets it to "true" unless it already
// is; unmark removes it whatever its value.
func labelPatch(a action, current map[string]string) []byte {
	var value any
	switch v, ok := current[interpreter.RetainReplicasLabel]; {
	case a == mark && v != interpreter.RetainReplicasValue:
		value = interpreter.RetainReplicasValue
	case a == unmark && ok:
		value = nil // null deletes the key
	default:
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{interpreter.RetainReplicasLabel: value}}})
	return patch
}

func (c *Controller) reconcile(ctx context.Context, key string) error {
	log := klog.FromContext(ctx)
	t, err := parseKey(key)
	if err != nil {
		// Only targetKey makes keys: a retry cannot help.
		log.Error(err, "Dropping key")
		return nil
	}
	hpas, err := c.hpas.HorizontalPodAutoscalers(t.namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	if stale(t.action, scaledBy(hpas, t.ref)) {
		return nil
	}
	gv, err := schema.ParseGroupVersion(t.ref.APIVersion)
	if err != nil {
		log.Error(err, "Ignoring a scale target with a malformed apiVersion", "namespace", t.namespace, "scaleTargetRef", t.ref)
		return nil
	}
	res, err := c.resource(gv.WithKind(t.ref.Kind))
	if err != nil {
		return fmt.Errorf("mapping the scale target %s %s/%s: %w", t.ref.Kind, t.namespace, t.ref.Name, err)
	}
	obj, err := res.Namespace(t.namespace).Get(ctx, t.ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Nothing to label; creating the target later does not mark it
		// (as in Karmada) until the HPA next changes.
		return nil
	}
	if err != nil {
		return err
	}
	patch := labelPatch(t.action, obj.GetLabels())
	if patch == nil {
		return nil
	}
	_, err = res.Namespace(t.namespace).Patch(ctx, t.ref.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("patching the labels of %s %s/%s: %w", t.ref.Kind, t.namespace, t.ref.Name, err)
	}
	log.V(2).Info("Patched the retain-replicas label of a scale target", "action", t.action, "kind", t.ref.Kind,
		"object", klog.KRef(t.namespace, t.ref.Name))
	return nil
}

// resource returns the dynamic client of gvk's resource, refreshing the
// mapper once when the kind is unknown (a CRD created a moment ago).
func (c *Controller) resource(gvk schema.GroupVersionKind) (dynamic.NamespaceableResourceInterface, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if r, ok := c.mapper.(meta.ResettableRESTMapper); ok && meta.IsNoMatchError(err) {
		r.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	return c.client.Resource(m.Resource), nil
}
