package detector

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

var everything = labels.Everything()

// claimMeta is the claim metadata of p (the policy's permanent-id label and
// name annotations, Karmada's), with nil values for the keys of the other
// policy kind so a patch removes them.
func claimMeta(p *policy) (lbls, annos map[string]any) {
	if p.Cluster {
		return map[string]any{
				policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: p.ID,
				policyv1alpha1.PropagationPolicyPermanentIDLabel:        nil,
			}, map[string]any{
				policyv1alpha1.ClusterPropagationPolicyAnnotation:   p.Name,
				policyv1alpha1.PropagationPolicyNamespaceAnnotation: nil,
				policyv1alpha1.PropagationPolicyNameAnnotation:      nil,
			}
	}
	return map[string]any{
			policyv1alpha1.PropagationPolicyPermanentIDLabel:        p.ID,
			policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: nil,
		}, map[string]any{
			policyv1alpha1.PropagationPolicyNamespaceAnnotation: p.Namespace,
			policyv1alpha1.PropagationPolicyNameAnnotation:      p.Name,
			policyv1alpha1.ClusterPropagationPolicyAnnotation:   nil,
		}
}

// bindingMeta is the metadata p gives a binding: its claim metadata and
// its apply annotations (nil values for those it lacks, so a patch removes
// them).
func bindingMeta(p *policy) (lbls, annos map[string]any) {
	lbls, annos = claimMeta(p)
	for _, k := range flotillav1alpha1.ApplyAnnotations {
		if v, ok := p.Apply[k]; ok {
			annos[k] = v
		} else {
			annos[k] = nil
		}
	}
	return lbls, annos
}

// unclaimBindingMeta removes every claim key and apply annotation from a
// binding.
func unclaimBindingMeta() (lbls, annos map[string]any) {
	lbls, annos = unclaimMeta()
	for _, k := range flotillav1alpha1.ApplyAnnotations {
		annos[k] = nil
	}
	return lbls, annos
}

// unclaimMeta removes every claim key.
func unclaimMeta() (lbls, annos map[string]any) {
	return map[string]any{
			policyv1alpha1.PropagationPolicyPermanentIDLabel:        nil,
			policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: nil,
		}, map[string]any{
			policyv1alpha1.PropagationPolicyNamespaceAnnotation: nil,
			policyv1alpha1.PropagationPolicyNameAnnotation:      nil,
			policyv1alpha1.ClusterPropagationPolicyAnnotation:   nil,
		}
}

// metaPatch returns the merge patch setting lbls and annos, or nil when
// meta already has them (nil values: absent).
func metaPatch(curLabels, curAnnos map[string]string, lbls, annos map[string]any) []byte {
	same := func(cur map[string]string, want map[string]any) bool {
		for k, v := range want {
			have, ok := cur[k]
			if v == nil {
				if ok {
					return false
				}
				continue
			}
			if !ok || have != v.(string) {
				return false
			}
		}
		return true
	}
	if same(curLabels, lbls) && same(curAnnos, annos) {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": lbls, "annotations": annos}})
	return b
}

// claim writes p's claim metadata on the template unless it is there, and
// returns the template as it now is.
func (c *Controller) claim(ctx context.Context, gvk schema.GroupVersionKind, obj *unstructured.Unstructured, p *policy) (*unstructured.Unstructured, error) {
	l, a := claimMeta(p)
	patch := metaPatch(obj.GetLabels(), obj.GetAnnotations(), l, a)
	if patch == nil {
		return obj, nil
	}
	return c.patchTemplate(ctx, gvk, obj, patch)
}

// unclaim removes the claim metadata from a template and its binding; the
// binding and what it propagated stay (a later policy may take them over;
// deleting the template still removes the member objects).
func (c *Controller) unclaim(ctx context.Context, gvk schema.GroupVersionKind, obj *unstructured.Unstructured) error {
	l, a := unclaimMeta()
	if patch := metaPatch(obj.GetLabels(), obj.GetAnnotations(), l, a); patch != nil {
		if _, err := c.patchTemplate(ctx, gvk, obj, patch); err != nil {
			return err
		}
	}
	return c.unclaimBinding(ctx, gvk, obj.GetNamespace(), obj.GetName())
}
