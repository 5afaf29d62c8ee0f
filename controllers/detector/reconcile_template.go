package detector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/selectors"
	"github.com/flotilla-io/flotilla/telemetry"
)

// Event reasons on templates (Karmada's).
const (
	EventReasonApplyPolicySucceed   = "ApplyPolicySucceed"
	EventReasonApplyPolicyFailed    = "ApplyPolicyFailed"
	EventReasonPreemptPolicySucceed = "PreemptPolicySucceed"
	EventReasonPreemptPolicyFailed  = "PreemptPolicyFailed"
	EventReasonGetReplicasSucceed   = "GetReplicasSucceed"
	EventReasonGetReplicasFailed    = "GetReplicasFailed"
	EventReasonGetComponentsSucceed = "GetComponentsSucceed"
	EventReasonGetComponentsFailed  = "GetComponentsFailed"
)

// reconcileTemplate brings the claim and the binding of one template in line
// with the policies. A user's change of the template not acted upon (an
// error, a retry later) stays recorded for the next attempt.
func (c *Controller) reconcileTemplate(ctx context.Context, key string) error {
	_, changed := c.changed.LoadAndDelete(key)
	done, err := c.syncTemplate(ctx, key, changed)
	if changed && (err != nil || !done) {
		c.changed.Store(key, true)
	}
	return err
}

// syncTemplate is reconcileTemplate; done is false when the template is
// queued again for later.
func (c *Controller) syncTemplate(ctx context.Context, key string, changed bool) (done bool, err error) {
	gvk, ns, name, err := parseTemplateKey(key)
	if err != nil {
		return true, nil
	}
	obj, err := c.templates.Get(ctx, gvk, ns, name)
	switch {
	case errors.Is(err, templates.ErrNotWatched):
		return true, nil
	case apierrors.IsNotFound(err):
		return true, c.deleteBinding(ctx, gvk, ns, name, "")
	case err != nil:
		return false, err
	}
	if obj.GetDeletionTimestamp() != nil {
		return true, nil
	}
	if (ns != "" && names.ReservedNamespace(ns)) || obj.GetLabels()[workv1alpha2.ResourceTemplateClaimedByLabel] != "" {
		return true, nil
	}
	if ns == "kube-system" || ns == "" && gvk.Kind == "Namespace" && names.ReservedNamespace(name) {
		return true, nil
	}
	matchStart := time.Now()
	current, claimed := c.currentPolicy(obj)
	pps, cpps, err := c.candidates(ns)
	if err != nil {
		return false, err
	}
	chosen, ok := choose(pps, cpps, obj, current)
	telemetry.ObserveMatchPolicy(matchStart)
	if !ok {
		if claimed {
			return true, c.unclaim(ctx, gvk, obj)
		}
		return true, nil
	}
	preempting := preempts(chosen, current, obj)
	if missing := c.missingOverrides(chosen); len(missing) > 0 {
		klog.FromContext(ctx).V(2).Info("Waiting for dependent overrides", "template", key, "policy", chosen.Key(), "missing", missing)
		c.queue.AddAfter(key, 5*time.Second)
		return false, nil
	}
	// Applying the policy, from here: the claim, then the binding.
	applyStart := time.Now()
	claimedObj, err := c.claim(ctx, gvk, obj, chosen)
	if preempting {
		telemetry.CountPolicyPreemption(err)
	}
	if err != nil {
		telemetry.ObserveApplyPolicy(err, applyStart)
		if preempting {
			c.event(obj, corev1.EventTypeWarning, EventReasonPreemptPolicyFailed, preemptMessage(chosen, current, err))
		}
		c.event(obj, corev1.EventTypeWarning, EventReasonApplyPolicyFailed, fmt.Sprintf("Apply policy(%s) failed: %v", policyName(chosen), err))
		return false, err
	}
	obj = claimedObj
	if preempting {
		c.event(obj, corev1.EventTypeNormal, EventReasonPreemptPolicySucceed, preemptMessage(chosen, current, nil))
	}
	if lazyWaits(chosen, changed) {
		// The claim is chosen's at once; the binding, if any, keeps its
		// placement and spec until the template changes. Its claim follows
		// the template's, so that the policies find what they claim.
		err := c.claimBinding(ctx, gvk, ns, name, chosen)
		telemetry.ObserveApplyPolicy(err, applyStart)
		return true, err
	}
	wrote, err := c.ensureBinding(ctx, gvk, obj, chosen)
	if errors.Is(err, errNotCached) {
		// Not an attempt: the binding's cache has not caught up yet.
		return false, err
	}
	telemetry.ObserveApplyPolicy(err, applyStart)
	c.recordInterpretation(gvk, obj, wrote, err)
	if err != nil {
		c.event(obj, corev1.EventTypeWarning, EventReasonApplyPolicyFailed, fmt.Sprintf("Apply policy(%s) failed: %v", policyName(chosen), err))
		return false, err
	}
	if wrote {
		c.event(obj, corev1.EventTypeNormal, EventReasonApplyPolicySucceed, fmt.Sprintf("Apply policy(%s) succeed", policyName(chosen)))
	}
	return true, nil
}

// recordInterpretation records on the template how the interpreter read
// it for the binding: GetComponentsFailed or GetReplicasFailed when that
// failed; when the binding was written, GetComponentsSucceed for a kind
// described by components, GetReplicasSucceed for one with replicas.
func (c *Controller) recordInterpretation(gvk schema.GroupVersionKind, obj *unstructured.Unstructured, wrote bool, err error) {
	if gc := (*selectors.ComponentsError)(nil); errors.As(err, &gc) {
		c.event(obj, corev1.EventTypeWarning, EventReasonGetComponentsFailed, fmt.Sprintf("Get components of resource template failed: %v", gc.Err))
		return
	}
	if gr := (*selectors.ReplicasError)(nil); errors.As(err, &gr) {
		c.event(obj, corev1.EventTypeWarning, EventReasonGetReplicasFailed, fmt.Sprintf("Get replicas of resource template failed: %v", gr.Err))
		return
	}
	if err != nil || !wrote || c.interp == nil {
		return
	}
	switch {
	case c.MultiplePodTemplates && c.interp.HookEnabled(gvk, interpreter.InterpretComponent):
		// The hook desiredSpec asked (see there).
		c.event(obj, corev1.EventTypeNormal, EventReasonGetComponentsSucceed, "Get components of resource template successfully.")
	case c.interp.HookEnabled(gvk, interpreter.InterpretReplica):
		c.event(obj, corev1.EventTypeNormal, EventReasonGetReplicasSucceed, "Get replicas of resource template successfully.")
	}
}

// preempts tells whether chosen takes obj from current, a live policy
// that still selects it.
func preempts(chosen, current *policy, obj *unstructured.Unstructured) bool {
	if current == nil || chosen.Key() == current.Key() {
		return false
	}
	still := current.Selects(obj)
	return still
}

// preemptMessage is Karmada's PreemptPolicySucceed/Failed message.
func preemptMessage(winner, loser *policy, err error) string {
	describe := func(p *policy, first bool) string {
		kind := "propagation policy"
		if p.Cluster {
			kind = "cluster propagation policy"
		}
		if first {
			kind = strings.ToUpper(kind[:1]) + kind[1:]
		}
		return kind + "(" + policyName(p) + ")"
	}
	if err != nil {
		return fmt.Sprintf("%s failed to preempt %s: %v", describe(winner, true), describe(loser, false), err)
	}
	return fmt.Sprintf("%s preempted %s successfully", describe(winner, true), describe(loser, false))
}

func policyName(p *policy) string {
	if p.Cluster {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}

// currentPolicy returns the live policy that claims obj, if it still exists
// with the same permanent id and is not being deleted; claimed tells whether
// obj carries a claim at all.
func (c *Controller) currentPolicy(obj *unstructured.Unstructured) (*policy, bool) {
	cl, ok := claimOf(obj)
	if !ok {
		return nil, false
	}
	if cl.Cluster {
		p, err := c.cpps.Get(cl.Name)
		if err != nil || p.DeletionTimestamp != nil || p.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] != cl.ID {
			return nil, true
		}
		return fromCPP(p), true
	}
	p, err := c.pps.PropagationPolicies(cl.Namespace).Get(cl.Name)
	if err != nil || p.DeletionTimestamp != nil || p.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != cl.ID {
		return nil, true
	}
	return fromPP(p), true
}

// candidates are the live policies that may claim a template of namespace ns.
func (c *Controller) candidates(ns string) (pps, cpps []*policy, err error) {
	if ns != "" {
		list, err := c.pps.PropagationPolicies(ns).List(everything)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range list {
			if p.DeletionTimestamp == nil {
				pps = append(pps, fromPP(p))
			}
		}
	}
	list, err := c.cpps.List(everything)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range list {
		if p.DeletionTimestamp == nil {
			cpps = append(cpps, fromCPP(p))
		}
	}
	return pps, cpps, nil
}

// missingOverrides lists the dependentOverrides of p that do not exist yet.
func (c *Controller) missingOverrides(p *policy) []string {
	var missing []string
	for _, name := range p.Spec.DependentOverrides {
		if _, err := c.ops.OverridePolicies(p.Namespace).Get(name); err != nil {
			missing = append(missing, name)
		}
	}
	return missing
}

// event records an event on a template.
func (c *Controller) event(obj *unstructured.Unstructured, eventType, reason, msg string) {
	if obj == nil || c.recorder == nil {
		return
	}
	c.recorder.Event(templateRef(obj), eventType, reason, msg)
}

func templateRef(obj *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
		Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
}

// patchTemplate merge-patches a template's metadata on the host.
func (c *Controller) patchTemplate(ctx context.Context, gvk schema.GroupVersionKind, obj *unstructured.Unstructured, patch []byte) (*unstructured.Unstructured, error) {
	res, _, err := c.templates.Resource(gvk)
	if err != nil {
		return nil, err
	}
	if obj.GetNamespace() != "" {
		return res.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	}
	return res.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
}
