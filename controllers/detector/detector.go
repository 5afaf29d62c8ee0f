// Package detector matches resource templates on the host with
// (Cluster)PropagationPolicies, claims them for the winning policy and keeps
// their (Cluster)ResourceBindings in step (docs/compatibility.md, Which policy
// claims a template). It also runs the policies' deletion: claims are removed,
// member objects stay.
package detector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	schedulinginformers "k8s.io/client-go/informers/scheduling/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	policyinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/policy/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// ControllerName is the name of the detector in --controllers.
const ControllerName = "detector"

// kindsKey on the policy queue recomputes the watched kinds.
const kindsKey = "kinds"

// Controller is the resource detector.
type Controller struct {
	templates *templates.Informers
	pps       policylisters.PropagationPolicyLister
	cpps      policylisters.ClusterPropagationPolicyLister
	ops       policylisters.OverridePolicyLister
	rbs       worklisters.ResourceBindingLister
	crbs      worklisters.ClusterResourceBindingLister
	synced    []cache.InformerSynced
	client    versioned.Interface
	interp    interpreter.Interpreter
	recorder  record.EventRecorder
	// priorityClasses are the control plane's PriorityClasses, for
	// schedulePriority (KubePriorityClass).
	priorityClasses schedulinglisters.PriorityClassLister

	queue    worker.Interface                             // template keys
	policies workqueue.TypedRateLimitingInterface[string] // policy keys and kindsKey

	// MultiplePodTemplates asks the interpreter for the components of
	// workloads made of several pod templates (Karmada's alpha
	// MultiplePodTemplatesScheduling, off by default there too); off, a
	// workload's replicas are read with GetReplicas alone.
	MultiplePodTemplates bool

	// changed holds the templates their users changed since they were
	// last reconciled, for policies with activationPreference Lazy.
	changed sync.Map
	// created holds the keys ("namespace/name") of bindings this detector
	// created and its cache has not shown yet.
	created sync.Map
	now     func() time.Time
}

// New returns the detector. It registers itself with tmpl for template events.
func New(tmpl *templates.Informers, pps policyinformers.PropagationPolicyInformer, cpps policyinformers.ClusterPropagationPolicyInformer,
	ops policyinformers.OverridePolicyInformer, rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer,
	priorityClasses schedulinginformers.PriorityClassInformer,
	client versioned.Interface, interp interpreter.Interpreter, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		templates:       tmpl,
		priorityClasses: priorityClasses.Lister(),
		pps:             pps.Lister(), cpps: cpps.Lister(), ops: ops.Lister(), rbs: rbs.Lister(), crbs: crbs.Lister(),
		synced: []cache.InformerSynced{pps.Informer().HasSynced, cpps.Informer().HasSynced, ops.Informer().HasSynced,
			rbs.Informer().HasSynced, crbs.Informer().HasSynced, priorityClasses.Informer().HasSynced},
		client: client, interp: interp, recorder: recorder, now: time.Now,
		queue:    worker.NewFairQueue("detector-templates", templateNamespace),
		policies: worker.NewQueue("detector-policies"),
	}
	tmpl.AddHandler(c)
	policyHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueuePolicy,
		UpdateFunc: func(_, obj any) { c.enqueuePolicy(obj) },
		DeleteFunc: c.enqueuePolicy,
	}
	for _, inf := range []cache.SharedIndexInformer{pps.Informer(), cpps.Informer()} {
		if _, err := inf.AddEventHandler(policyHandler); err != nil {
			return nil, err
		}
	}
	// A PriorityClass created or changed: the templates of the policies
	// naming it get (or update) their binding's priority.
	pcHandler := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
			c.enqueuePoliciesNaming(pc.Name)
		}
	}
	if _, err := priorityClasses.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: pcHandler, UpdateFunc: func(_, obj any) { pcHandler(obj) }, DeleteFunc: pcHandler,
	}); err != nil {
		return nil, err
	}
	// Bindings name templates: watching their kinds finds templates deleted
	// while the detector was down, and removes bindings of deleted templates.
	bindingHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueBound(obj, true) },
		DeleteFunc: func(obj any) { c.enqueueBound(obj, false) },
	}
	for _, inf := range []cache.SharedIndexInformer{rbs.Informer(), crbs.Informer()} {
		if _, err := inf.AddEventHandler(bindingHandler); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Run runs the detector until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.policies.Add(kindsKey)
	go worker.Run(ctx, c.policies, c.synced, 1, c.reconcilePolicy)
	go c.retryMissingKinds(ctx)
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcileTemplate)
}

// retryMissingKinds recomputes the watched kinds now and then, for kinds
// the host did not serve when a policy selected them and that no CRD
// defines (aggregated APIs): a CRD's changes are followed as they come.
func (c *Controller) retryMissingKinds(ctx context.Context) {
	t := time.NewTicker(15 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.policies.Add(kindsKey)
		}
	}
}

// templateKey is "<apiVersion>|<kind>|<namespace>|<name>".
func templateKey(gvk schema.GroupVersionKind, namespace, name string) string {
	av, k := gvk.ToAPIVersionAndKind()
	return av + "|" + k + "|" + namespace + "|" + name
}

// templateNamespace is the namespace of a template key: the detector's
// queue is fair by it.
func templateNamespace(key string) string {
	if p := strings.Split(key, "|"); len(p) == 4 {
		return p[2]
	}
	return ""
}

func parseTemplateKey(key string) (schema.GroupVersionKind, string, string, error) {
	p := strings.Split(key, "|")
	if len(p) != 4 {
		return schema.GroupVersionKind{}, "", "", fmt.Errorf("bad template key %q", key)
	}
	return schema.FromAPIVersionAndKind(p[0], p[1]), p[2], p[3], nil
}

// OnTemplate implements templates.Handler. A template created, deleted or
// changed by its user is marked changed, for Lazy policies; one changed by
// Karmada's components alone (the claim) is only queued.
func (c *Controller) OnTemplate(gvk schema.GroupVersionKind, old, obj *member.Compact, deleted bool) {
	if !deleted && old != nil && !templates.SpecChanged(old, obj) {
		return
	}
	key := templateKey(gvk, obj.GetNamespace(), obj.GetName())
	if deleted || old == nil || !compactChangedByKarmada(old, obj) {
		c.changed.Store(key, true)
	}
	c.queue.Add(key)
}

// compactChangedByKarmada is changedByKarmada of templates as the
// informers hold them: decoded to compare; a template that does not
// decode counts as changed by its user.
func compactChangedByKarmada(old, obj *member.Compact) bool {
	o, err := old.Object()
	if err != nil {
		return false
	}
	n, err := obj.Object()
	return err == nil && changedByKarmada(o, n)
}

// OnTemplateListed implements templates.ListedHandler: a template that
// existed before its kind was watched is no change, and a Lazy policy
// that first matches it claims it without a binding. It waits behind the
// changes, unless it was created lately and has no binding yet: most
// likely one made while no leader ran (a takeover), which is work to do,
// not a re-check.
func (c *Controller) OnTemplateListed(gvk schema.GroupVersionKind, obj *member.Compact) {
	key := templateKey(gvk, obj.GetNamespace(), obj.GetName())
	if c.now().Sub(obj.GetCreationTimestamp().Time) < recentlyCreated && !c.hasBinding(gvk, obj.GetNamespace(), obj.GetName()) {
		c.queue.Add(key)
		return
	}
	c.queue.AddInitial(key)
}

// recentlyCreated is how new a listed template without a binding must be
// to go with the changes: about the longest a takeover leaves templates
// without a leader.
const recentlyCreated = 2 * time.Minute

// hasBinding tells whether the template has its ResourceBinding (or, when
// cluster-scoped, its ClusterResourceBinding) in the cache.
func (c *Controller) hasBinding(gvk schema.GroupVersionKind, namespace, name string) bool {
	bn := names.BindingName(gvk.Kind, name)
	var err error
	if namespace != "" {
		_, err = c.rbs.ResourceBindings(namespace).Get(bn)
	} else {
		_, err = c.crbs.Get(bn)
	}
	return err == nil
}

// OnDefinitionChanged implements templates.DefinitionHandler: a CRD
// created, deleted or serving other versions changes how the wanted kinds
// are watched, at once rather than at the next retry of missing kinds.
func (c *Controller) OnDefinitionChanged() { c.policies.Add(kindsKey) }

func (c *Controller) enqueuePolicy(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	switch p := obj.(type) {
	case *policyv1alpha1.PropagationPolicy:
		c.policies.Add("pp/" + p.Namespace + "/" + p.Name)
	case *policyv1alpha1.ClusterPropagationPolicy:
		c.policies.Add("cpp/" + p.Name)
	}
	c.policies.Add(kindsKey)
}

// enqueuePoliciesNaming queues the policies whose schedulePriority names
// the PriorityClass name.
func (c *Controller) enqueuePoliciesNaming(name string) {
	names := func(s *policyv1alpha1.PropagationSpec) bool {
		return s.SchedulePriority != nil && s.SchedulePriority.PriorityClassName == name
	}
	if pps, err := c.pps.List(labels.Everything()); err == nil {
		for _, p := range pps {
			if names(&p.Spec) {
				c.policies.Add("pp/" + p.Namespace + "/" + p.Name)
			}
		}
	}
	if cpps, err := c.cpps.List(labels.Everything()); err == nil {
		for _, p := range cpps {
			if names(&p.Spec) {
				c.policies.Add("cpp/" + p.Name)
			}
		}
	}
}

func (c *Controller) enqueueBound(obj any, added bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	var ref workv1alpha2.ObjectReference
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		ref = b.Spec.Resource
	case *workv1alpha2.ClusterResourceBinding:
		ref = b.Spec.Resource
	default:
		return
	}
	if m, err := meta.Accessor(obj); err == nil {
		c.created.Delete(m.GetNamespace() + "/" + m.GetName())
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if added && !c.templates.Synced(gvk) {
		c.policies.Add(kindsKey)
	}
	c.queue.Add(templateKey(gvk, ref.Namespace, ref.Name))
}

// wantedKinds are the kinds some policy selects or some binding names.
func (c *Controller) wantedKinds() (map[schema.GroupVersionKind]bool, error) {
	return WantedKinds(c.pps, c.cpps, c.rbs, c.crbs)
}

// WantedKinds are the kinds whose templates the detector watches: those
// some policy selects or some binding names. A standby computes them too,
// to keep the templates' informers warm.
func WantedKinds(pps policylisters.PropagationPolicyLister, cpps policylisters.ClusterPropagationPolicyLister,
	rbs worklisters.ResourceBindingLister, crbs worklisters.ClusterResourceBindingLister) (map[schema.GroupVersionKind]bool, error) {
	want := map[schema.GroupVersionKind]bool{}
	add := func(sels []policyv1alpha1.ResourceSelector) {
		for _, s := range sels {
			want[schema.FromAPIVersionAndKind(s.APIVersion, s.Kind)] = true
		}
	}
	ppList, err := pps.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, p := range ppList {
		add(p.Spec.ResourceSelectors)
	}
	cppList, err := cpps.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, p := range cppList {
		add(p.Spec.ResourceSelectors)
	}
	rbList, err := rbs.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, b := range rbList {
		want[schema.FromAPIVersionAndKind(b.Spec.Resource.APIVersion, b.Spec.Resource.Kind)] = true
	}
	crbList, err := crbs.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, b := range crbList {
		want[schema.FromAPIVersionAndKind(b.Spec.Resource.APIVersion, b.Spec.Resource.Kind)] = true
	}
	return want, nil
}

func (c *Controller) syncKinds(ctx context.Context) error {
	want, err := c.wantedKinds()
	if err != nil {
		return err
	}
	if missing := c.templates.Ensure(ctx, want); len(missing) > 0 {
		klog.FromContext(ctx).V(2).Info("Kinds not served by the host yet", "kinds", missing)
	}
	return nil
}

// InterpreterChanged queues every template of gvk: how the kind is
// interpreted (its replicas, requirements, dependencies) has changed.
func (c *Controller) InterpreterChanged(gvk schema.GroupVersionKind) { c.enqueueKind(gvk, "") }

// enqueueKind adds every cached template of gvk in namespace ("" = all).
func (c *Controller) enqueueKind(gvk schema.GroupVersionKind, namespace string) {
	for _, obj := range c.templates.List(gvk, namespace) {
		c.queue.Add(templateKey(gvk, obj.GetNamespace(), obj.GetName()))
	}
}
