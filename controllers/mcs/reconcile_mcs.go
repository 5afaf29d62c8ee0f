package mcs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// Reasons of the MultiClusterService conditions (Karmada's).
const (
	ReasonServiceAppliedSucceed          = "ServiceAppliedSucceed"
	ReasonServiceAppliedFailed           = "ServiceAppliedFailed"
	ReasonEndpointSliceDispatchedSucceed = "EndpointSliceDispatchedSucceed"
	ReasonEndpointSliceDispatchedFailed  = "EndpointSliceDispatchedFailed"
)

// Messages of the MultiClusterService conditions when all is well
// (Karmada's).
const (
	messageServiceApplied          = "Service is propagated to target clusters."
	messageEndpointSliceDispatched = "EndpointSlice are dispatched successfully"
)

// endpointSliceAPI is what a consumer must serve to be given endpoints.
var endpointSliceAPI = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")

// serviceReconciler does what one MultiClusterService asks: its Service
// propagated to the providers and consumers (the Service claimed, its
// binding written), the providers' collected endpoints given to the
// consumers, and the outcome in its conditions.
type serviceReconciler struct {
	// mcs reads a MultiClusterService (nil when there is none).
	mcs      func(namespace, name string) (*networkingv1alpha1.MultiClusterService, error)
	clusters func() ([]*clusterv1alpha1.Cluster, error)
	// service reads a Service template on the host (nil when none).
	service func(namespace, name string) (*corev1.Service, error)
	// binding reads the Service's ResourceBinding (nil when none).
	binding func(namespace, name string) (*workv1alpha2.ResourceBinding, error)
	works   func(namespace, name string) ([]*workv1alpha1.Work, error)
	work    func(namespace, name string) (*workv1alpha1.Work, bool)
	write   worksWriter
	// claim sets (or, with m nil, removes) the MultiClusterService's
	// claim on a Service template.
	claim func(ctx context.Context, svc *corev1.Service, m *networkingv1alpha1.MultiClusterService) error
	// bind creates the binding (existing nil) or patches it to b.
	bind func(ctx context.Context, existing *workv1alpha2.ResourceBinding, b *workv1alpha2.ResourceBinding) error
	// release takes the MultiClusterService's labels and annotations off
	// a binding, which stays (as a policy's binding does when the policy
	// goes: the Service keeps running).
	release func(ctx context.Context, rb *workv1alpha2.ResourceBinding) error
	// finalize adds or removes the controller's finalizer.
	finalize func(ctx context.Context, m *networkingv1alpha1.MultiClusterService, add bool) error
	// status writes the conditions.
	status func(ctx context.Context, m *networkingv1alpha1.MultiClusterService, conditions []metav1.Condition) error
	event  func(m *networkingv1alpha1.MultiClusterService, eventType, reason, message string)
}

// outcome is what a reconcile found, for the conditions.
type outcome struct {
	applied, dispatched   metav1.Condition
	notFound, unsupported []string // the events of the problems found
}

func (r *serviceReconciler) reconcile(ctx context.Context, namespace, name string) error {
	m, err := r.mcs(namespace, name)
	if err != nil {
		return err
	}
	all, err := r.works(namespace, name)
	if err != nil {
		return err
	}
	if m == nil || m.DeletionTimestamp != nil || !plan.CrossCluster(m) {
		return r.withdraw(ctx, m, namespace, name, all)
	}
	if !slices.Contains(m.Finalizers, networkingv1alpha1.MultiClusterServiceControllerFinalizer) {
		// The finalizer's update queues m again: what follows is written
		// with its new resourceVersion.
		return r.finalize(ctx, m, true)
	}
	clusters, err := r.clusters()
	if err != nil {
		return err
	}
	known := make([]string, 0, len(clusters))
	for _, c := range clusters {
		if c.DeletionTimestamp == nil {
			known = append(known, c.Name)
		}
	}
	providers, consumers := plan.Providers(m), plan.Consumers(m)
	var o outcome
	applyErr := r.applyService(ctx, m, providers, consumers, known, &o)
	dispatchErr := r.dispatch(ctx, m, providers, consumers, clusters, all, &o)
	if err := r.report(ctx, m, &o); err != nil {
		return err
	}
	return errors.Join(applyErr, dispatchErr)
}

// withdraw undoes what a MultiClusterService did, when it goes or stops
// being CrossCluster: the endpoints given to the consumers go (the
// collection stops by itself), its claim leaves the Service and its
// binding (which stay), and its finalizer goes last.
func (r *serviceReconciler) withdraw(ctx context.Context, m *networkingv1alpha1.MultiClusterService, namespace, name string, all []*workv1alpha1.Work) error {
	changes, err := plan.Reconcile([]string{networkingv1alpha1.ManagedByMultiClusterService}, nil, dispatchedWorks(all, nil))
	if err != nil {
		return err
	}
	if _, err := r.write.apply(ctx, changes); err != nil {
		return err
	}
	if m == nil {
		return nil
	}
	svc, err := r.service(namespace, name)
	if err != nil {
		return err
	}
	if svc != nil && claimedBy(svc.Labels, m) {
		if err := r.claim(ctx, svc, nil); err != nil {
			return err
		}
	}
	rb, err := r.binding(namespace, names.BindingName(plan.ServiceKind, name))
	if err != nil {
		return err
	}
	if rb != nil && rb.Labels[workv1alpha2.BindingManagedByLabel] == networkingv1alpha1.MultiClusterServiceKind {
		if err := r.release(ctx, rb); err != nil {
			return err
		}
	}
	if slices.Contains(m.Finalizers, networkingv1alpha1.MultiClusterServiceControllerFinalizer) {
		return r.finalize(ctx, m, false)
	}
	return nil
}

// claimedBy tells whether a Service's labels are m's claim.
func claimedBy(labels map[string]string, m *networkingv1alpha1.MultiClusterService) bool {
	return labels[workv1alpha2.ResourceTemplateClaimedByLabel] == networkingv1alpha1.MultiClusterServiceKind &&
		labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] == m.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel]
}

// applyService claims m's Service and makes its binding place it on the
// known providers and consumers.
func (r *serviceReconciler) applyService(ctx context.Context, m *networkingv1alpha1.MultiClusterService, providers, consumers plan.Named, known []string, o *outcome) error {
	var problems []string
	for _, c := range providers.Unknown(known) {
		problems = append(problems, fmt.Sprintf("Provider cluster %s is not found", c))
		o.notFound = append(o.notFound, problems[len(problems)-1])
	}
	for _, c := range consumers.Unknown(known) {
		problems = append(problems, fmt.Sprintf("Consumer cluster %s is not found", c))
		o.notFound = append(o.notFound, problems[len(problems)-1])
	}
	fail := func(err error, problems ...string) error {
		msg := strings.Join(problems, "; ")
		if err != nil {
			msg = err.Error()
		}
		o.applied = metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionFalse,
			Reason: ReasonServiceAppliedFailed, Message: msg}
		return err
	}
	svc, err := r.service(m.Namespace, m.Name)
	if err != nil {
		return fail(err)
	}
	if svc == nil {
		return fail(nil, append([]string{fmt.Sprintf("Service %s/%s is not found", m.Namespace, m.Name)}, problems...)...)
	}
	if !claimedBy(svc.Labels, m) || svc.Annotations[networkingv1alpha1.MultiClusterServiceNameAnnotation] != m.Name {
		if err := r.claim(ctx, svc, m); err != nil {
			return fail(fmt.Errorf("claiming Service %s/%s: %w", m.Namespace, m.Name, err))
		}
	}
	targets := append(providers.In(known), consumers.In(known)...)
	want := plan.BindService(m, string(svc.UID), svc.ResourceVersion, targets)
	rb, err := r.binding(m.Namespace, names.BindingName(plan.ServiceKind, m.Name))
	if err != nil {
		return fail(err)
	}
	desired := &workv1alpha2.ResourceBinding{Spec: want.Spec}
	desired.Namespace, desired.Name = m.Namespace, names.BindingName(plan.ServiceKind, m.Name)
	desired.Labels, desired.Annotations = want.Labels, want.Annotations
	if rb == nil || !bindingHas(rb, desired) {
		if err := r.bind(ctx, rb, desired); err != nil {
			return fail(fmt.Errorf("writing the binding of Service %s/%s: %w", m.Namespace, m.Name, err))
		}
	}
	if len(problems) > 0 {
		return fail(nil, problems...)
	}
	o.applied = metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionTrue,
		Reason: ReasonServiceAppliedSucceed, Message: messageServiceApplied}
	return nil
}

// bindingHas tells whether rb already is desired, in the parts a
// MultiClusterService writes (the Service's resourceVersion aside).
func bindingHas(rb, desired *workv1alpha2.ResourceBinding) bool {
	for k, v := range desired.Labels {
		if rb.Labels[k] != v {
			return false
		}
	}
	for k, v := range desired.Annotations {
		if rb.Annotations[k] != v {
			return false
		}
	}
	for _, k := range claimKeys {
		if _, ok := rb.Labels[k]; ok {
			return false
		}
		if _, ok := rb.Annotations[k]; ok {
			return false
		}
	}
	// A new resourceVersion of the Service alone (its claim, for one)
	// changes no decision: it goes along with the next write, as the
	// detector does.
	a, b := rb.Spec, desired.Spec
	a.Resource.ResourceVersion = b.Resource.ResourceVersion
	return a.Resource == b.Resource && a.ConflictResolution == b.ConflictResolution && a.SchedulerName == b.SchedulerName &&
		a.Placement != nil && a.Placement.ClusterAffinity != nil && b.Placement.ClusterAffinity != nil &&
		slices.Equal(a.Placement.ClusterAffinity.ClusterNames, b.Placement.ClusterAffinity.ClusterNames)
}

// dispatch gives each Ready consumer the endpoints collected from the
// providers (not its own), and takes them from the clusters no longer
// consuming. A consumer that is not Ready keeps what it has.
func (r *serviceReconciler) dispatch(ctx context.Context, m *networkingv1alpha1.MultiClusterService, providers, consumers plan.Named,
	clusters []*clusterv1alpha1.Cluster, all []*workv1alpha1.Work, o *outcome) error {
	var from []plan.Collected
	for _, w := range all {
		if c, ok := plan.CollectedFrom(w, networkingv1alpha1.ManagedByMultiClusterService); ok && providers.Has(c.Cluster) {
			from = append(from, c)
		}
	}
	var problems []string
	for _, c := range consumers.Unknown(clusterNames(clusters)) {
		problems = append(problems, fmt.Sprintf("Consumer cluster %s is not found", c))
	}
	keep := map[string]bool{}
	var desired []*workv1alpha1.Work
	for _, cl := range clusters {
		if cl.DeletionTimestamp != nil || !consumers.Has(cl.Name) {
			continue
		}
		if !clusterReady(cl) {
			keep[cl.Name] = true
			continue
		}
		if !member.Serves(cl, endpointSliceAPI) {
			msg := fmt.Sprintf("Consumer cluster %s does not support EndpointSlice", cl.Name)
			problems = append(problems, msg)
			o.unsupported = append(o.unsupported, msg)
			continue
		}
		ws, err := plan.DispatchWorks(cl.Name, m.Namespace, m.Name, from)
		if err != nil {
			return err
		}
		desired = append(desired, ws...)
	}
	fail := func(msg string) {
		o.dispatched = metav1.Condition{Type: networkingv1alpha1.EndpointSliceDispatchedConditionType, Status: metav1.ConditionFalse,
			Reason: ReasonEndpointSliceDispatchedFailed, Message: msg}
	}
	existing := dispatchedWorks(all, keep)
	changes, err := plan.Reconcile([]string{networkingv1alpha1.ManagedByMultiClusterService}, desired, withNamed(existing, desired, r.work))
	if err == nil {
		_, err = r.write.apply(ctx, changes)
	}
	switch {
	case err != nil:
		fail(err.Error())
		return err
	case len(problems) > 0:
		fail(strings.Join(problems, "; "))
	default:
		o.dispatched = metav1.Condition{Type: networkingv1alpha1.EndpointSliceDispatchedConditionType, Status: metav1.ConditionTrue,
			Reason: ReasonEndpointSliceDispatchedSucceed, Message: messageEndpointSliceDispatched}
	}
	return nil
}

// dispatchedWorks are the Works of all made for consumers of a
// MultiClusterService, but those of the clusters in keep.
func dispatchedWorks(all []*workv1alpha1.Work, keep map[string]bool) []*workv1alpha1.Work {
	var out []*workv1alpha1.Work
	for _, w := range all {
		cluster, ok := names.ClusterOf(w.Namespace)
		if ok && !keep[cluster] && plan.ManagedBy(w, networkingv1alpha1.ManagedByMultiClusterService) && !plan.IsCollected(w, "") {
			out = append(out, w)
		}
	}
	return out
}

func clusterNames(cs []*clusterv1alpha1.Cluster) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		if c.DeletionTimestamp == nil {
			out = append(out, c.Name)
		}
	}
	return out
}

// report writes the conditions when they changed, with the events of
// what changed: one event per change, not per reconcile (endpoints change
// often).
func (r *serviceReconciler) report(ctx context.Context, m *networkingv1alpha1.MultiClusterService, o *outcome) error {
	var want []metav1.Condition
	for _, c := range []metav1.Condition{o.applied, o.dispatched} {
		if c.Type != "" {
			c.ObservedGeneration = m.Generation
			want = append(want, c)
		}
	}
	conds, changed := plan.MergeConditions(m.Status.Conditions, want)
	if len(changed) == 0 {
		return nil
	}
	if err := r.status(ctx, m, conds); err != nil {
		return err
	}
	for _, c := range changed {
		switch {
		case c.Type == networkingv1alpha1.MCSServiceAppliedConditionType && c.Status == metav1.ConditionTrue:
			r.event(m, corev1.EventTypeNormal, EventReasonSyncServiceSucceed, c.Message)
		case c.Type == networkingv1alpha1.MCSServiceAppliedConditionType:
			r.event(m, corev1.EventTypeWarning, EventReasonSyncServiceFailed, c.Message)
		case c.Status == metav1.ConditionTrue:
			r.event(m, corev1.EventTypeNormal, EventReasonDispatchEndpointSliceSucceed, c.Message)
		default:
			r.event(m, corev1.EventTypeWarning, EventReasonDispatchEndpointSliceFailed, c.Message)
		}
	}
	for _, msg := range slices.Compact(slices.Sorted(slices.Values(o.notFound))) {
		r.event(m, corev1.EventTypeWarning, EventReasonClusterNotFound, msg)
	}
	for _, msg := range o.unsupported {
		r.event(m, corev1.EventTypeWarning, EventReasonAPIIncompatible, msg)
	}
	return nil
}
