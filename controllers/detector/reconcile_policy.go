package detector

import (
	"context"
	"encoding/json"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// reconcilePolicy reacts to a policy change: the watched kinds follow the
// selectors, the templates the policy may now claim (or no longer claims)
// are re-examined, and a policy being deleted releases its templates
// before its finalizer goes.
func (c *Controller) reconcilePolicy(ctx context.Context, key string) error {
	if key == kindsKey {
		return c.syncKinds(ctx)
	}
	var (
		p        *policy
		deleting bool
		fin      string
		idLabel  string
	)
	if name, ok := strings.CutPrefix(key, "cpp/"); ok {
		cpp, err := c.cpps.Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		p, deleting = fromCPP(cpp), cpp.DeletionTimestamp != nil
		fin, idLabel = policyv1alpha1.ClusterPropagationPolicyControllerFinalizer, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel
		if deleting && !hasString(cpp.Finalizers, fin) {
			return nil
		}
	} else if rest, ok := strings.CutPrefix(key, "pp/"); ok {
		ns, name, _ := strings.Cut(rest, "/")
		pp, err := c.pps.PropagationPolicies(ns).Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		p, deleting = fromPP(pp), pp.DeletionTimestamp != nil
		fin, idLabel = policyv1alpha1.PropagationPolicyControllerFinalizer, policyv1alpha1.PropagationPolicyPermanentIDLabel
		if deleting && !hasString(pp.Finalizers, fin) {
			return nil
		}
	} else {
		return nil
	}
	// Templates the policy claims now, found through their bindings.
	claimed, err := c.claimedBy(idLabel, p.ID)
	if err != nil {
		return err
	}
	if deleting {
		for _, ref := range claimed {
			gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
			if obj, err := c.templates.Get(ctx, gvk, ref.Namespace, ref.Name); err == nil {
				if err := c.unclaim(ctx, gvk, obj); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			} else if err := c.unclaimBinding(ctx, gvk, ref.Namespace, ref.Name); err != nil {
				return err
			}
			// Another policy may claim it now.
			c.queue.Add(templateKey(gvk, ref.Namespace, ref.Name))
		}
		return c.removePolicyFinalizer(ctx, p, fin)
	}
	for _, ref := range claimed {
		c.queue.Add(templateKey(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), ref.Namespace, ref.Name))
	}
	for _, s := range p.Spec.ResourceSelectors {
		ns := s.Namespace
		if !p.Cluster {
			ns = p.Namespace
		}
		c.enqueueKind(schema.FromAPIVersionAndKind(s.APIVersion, s.Kind), ns)
	}
	return nil
}

// claimedBy lists the templates whose bindings carry idLabel=id.
func (c *Controller) claimedBy(idLabel, id string) ([]workv1alpha2.ObjectReference, error) {
	if id == "" {
		return nil, nil
	}
	sel := labels.SelectorFromSet(labels.Set{idLabel: id})
	var refs []workv1alpha2.ObjectReference
	rbs, err := c.rbs.List(sel)
	if err != nil {
		return nil, err
	}
	for _, b := range rbs {
		refs = append(refs, b.Spec.Resource)
	}
	crbs, err := c.crbs.List(sel)
	if err != nil {
		return nil, err
	}
	for _, b := range crbs {
		refs = append(refs, b.Spec.Resource)
	}
	return refs, nil
}

func (c *Controller) removePolicyFinalizer(ctx context.Context, p *policy, fin string) error {
	var current []string
	if p.Cluster {
		cpp, err := c.cpps.Get(p.Name)
		if err != nil {
			return nil
		}
		current = cpp.Finalizers
	} else {
		pp, err := c.pps.PropagationPolicies(p.Namespace).Get(p.Name)
		if err != nil {
			return nil
		}
		current = pp.Finalizers
	}
	var keep []string
	for _, f := range current {
		if f != fin {
			keep = append(keep, f)
		}
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": keep}})
	var err error
	if p.Cluster {
		_, err = c.client.PolicyV1alpha1().ClusterPropagationPolicies().Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	} else {
		_, err = c.client.PolicyV1alpha1().PropagationPolicies(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
