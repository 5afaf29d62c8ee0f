package rollout

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/rolloutplan"
)

// Event reasons of the controller itself (rolloutplan has those of a run's
// steps).
const (
	reasonStrategyNotFound  = "RolloutStrategyNotFound"
	reasonRolloutSuperseded = "RolloutSuperseded"
)

const (
	// runsKept is how many runs of a template are kept.
	runsKept = 10
	// createdWait is how long a run created here is waited for in the
	// cache before the binding is synced without it.
	createdWait = 30 * time.Second
)

// createdRun is a run the controller created, by binding key, until its
// informer shows it.
type createdRun struct {
	name string
	at   time.Time
}

// binding is what the controller needs of a (Cluster)ResourceBinding.
type binding struct {
	key         string
	uid         types.UID
	rv          string
	namespace   string // "" for a ClusterResourceBinding
	name        string
	clusterWide bool
	obj         runtime.Object
	annotations map[string]string
	spec        *workv1alpha2.ResourceBindingSpec
}

func (c *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, clusterWide, ok := names.ParseBindingKey(key)
	if !ok {
		return nil
	}
	b := &binding{key: key, namespace: ns, name: name, clusterWide: clusterWide}
	if clusterWide {
		crb, err := c.crbs.Get(name)
		if apierrors.IsNotFound(err) {
			return c.cleanup(ctx, key)
		} else if err != nil {
			return err
		}
		if crb.DeletionTimestamp != nil {
			return nil
		}
		b.obj, b.annotations, b.spec, b.uid, b.rv = crb, crb.Annotations, &crb.Spec, crb.UID, crb.ResourceVersion
	} else {
		rb, err := c.rbs.ResourceBindings(ns).Get(name)
		if apierrors.IsNotFound(err) {
			return c.cleanup(ctx, key)
		} else if err != nil {
			return err
		}
		if rb.DeletionTimestamp != nil {
			return nil
		}
		b.obj, b.annotations, b.spec, b.uid, b.rv = rb, rb.Annotations, &rb.Spec, rb.UID, rb.ResourceVersion
	}
	if v, ok := c.revisionWrites.Pending(b.uid, b.rv); ok {
		// The cache has not seen the last patch of the revisions yet.
		b.annotations = maps.Clone(b.annotations)
		if b.annotations == nil {
			b.annotations = map[string]string{}
		}
		if v == nil {
			delete(b.annotations, flotillav1alpha1.RevisionsAnnotation)
		} else {
			b.annotations[flotillav1alpha1.RevisionsAnnotation] = *v
		}
	}
	ref := b.spec.Resource
	template, err := c.templates.Get(ctx, schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), ref.Namespace, ref.Name)
	if errors.Is(err, templates.ErrNotWatched) || apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if ref.UID != "" && ref.UID != template.GetUID() {
		return nil
	}
	revs, held := b.annotations[flotillav1alpha1.RevisionsAnnotation]
	strategyName := c.strategyOf(template)
	if strategyName == "" {
		if held {
			// The policy no longer names a strategy: every cluster gets
			// the template as it is, as without one.
			return c.patchRevisions(ctx, b, nil)
		}
		return nil
	}
	strategy, err := c.strategies.Get(strategyName)
	if apierrors.IsNotFound(err) {
		c.recorder.Eventf(templates.Ref(template), corev1.EventTypeWarning, reasonStrategyNotFound,
			"RolloutStrategy %s named by the policy does not exist: the clusters keep the revisions they run", strategyName)
		return nil
	} else if err != nil {
		return err
	}
	hash := rolloutplan.Hash(template)
	targets := make([]string, 0, len(b.spec.Clusters))
	for _, t := range b.spec.Clusters {
		targets = append(targets, t.Name)
	}
	if !held {
		// The first time under a strategy: every cluster is held at the
		// template as it is, kept as a revision, so that the next change
		// is rolled out.
		if _, err := c.ensureRevision(ctx, b, template, hash, false); err != nil {
			return err
		}
		m := make(map[string]string, len(targets))
		for _, t := range targets {
			m[t] = hash
		}
		return c.patchRevisions(ctx, b, m)
	}
	stored := rolloutplan.ParseRevisions(revs)
	// Clusters new to the placement get the template as it is, or the
	// revision the strategy holds new clusters at (the binding controller
	// built their Works so); clusters that left are forgotten.
	m := make(map[string]string, len(targets)+1)
	behind := false
	for _, t := range targets {
		h, ok := stored[t]
		if !ok {
			h, ok = stored[flotillav1alpha1.RevisionsAnyCluster]
		}
		if !ok {
			h = hash
		}
		m[t] = h
		behind = behind || h != hash
	}
	if h, ok := stored[flotillav1alpha1.RevisionsAnyCluster]; ok {
		m[flotillav1alpha1.RevisionsAnyCluster] = h
	}
	target := names.RevisionName(b.name, hash)
	// The newest run is this change's when it rolls out this revision; an
	// older run of the same revision (the template went back to it) is
	// another change's. Unfinished runs of other revisions are superseded.
	var run *flotillav1alpha1.RolloutRun
	runs := c.runsOf(key)
	if v, ok := c.created.Load(key); ok {
		// A run created here and not cached yet: deciding without it
		// would create it again. Its arrival queues the binding; the
		// requeue covers an arrival before the record.
		p := v.(createdRun)
		switch cached := slices.ContainsFunc(runs, func(r *flotillav1alpha1.RolloutRun) bool { return r.Name == p.name }); {
		case cached || c.now().Sub(p.at) > createdWait:
			c.created.Delete(key)
		default:
			c.queue.AddAfter(key, time.Second)
			return nil
		}
	}
	if n := len(runs); n > 0 && runs[n-1].Spec.ToRevision == target {
		run = runs[n-1]
	}
	for _, r := range runs {
		if r != run && !r.Status.Phase.Terminal() {
			if err := c.supersede(ctx, r, template); err != nil {
				return err
			}
		}
	}
	if run == nil && behind {
		rev, err := c.ensureRevision(ctx, b, template, hash, true)
		if err != nil {
			return err
		}
		from := mostRun(m, hash)
		if err := c.createRun(ctx, b, template, strategyName, rev, from); err != nil {
			return err
		}
		holdNewClusters(m, strategy, from)
		return c.patchRevisions(ctx, b, m)
	}
	if run == nil || run.Status.Phase.Terminal() {
		holdNewClusters(m, strategy, "")
		return c.patchRevisions(ctx, b, m)
	}
	holdNewClusters(m, strategy, strings.TrimPrefix(run.Spec.FromRevision, b.name+"-"))
	return c.step(ctx, b, template, strategy, run, m, hash)
}

// step takes run one step (rolloutplan.Step): the clusters it updates are
// written to the binding first, then the run's status, then the events.
func (c *Controller) step(ctx context.Context, b *binding, template *unstructured.Unstructured, strategy *flotillav1alpha1.RolloutStrategy,
	run *flotillav1alpha1.RolloutRun, m map[string]string, hash string) error {
	members := make([]rolloutplan.Member, 0, len(m))
	workName := names.WorkName(template.GetKind(), template.GetName(), template.GetNamespace())
	for _, t := range b.spec.Clusters {
		mem := rolloutplan.Member{Cluster: rolloutplan.Cluster{Name: t.Name}, Revision: m[t.Name]}
		cluster, err := c.clusters.Get(t.Name)
		if err == nil {
			mem.Labels = cluster.Labels
		} else {
			cluster = nil
		}
		if mem.Revision == hash {
			work, err := c.works.Works(names.ExecutionNamespace(t.Name)).Get(workName)
			if err != nil {
				work = nil
			}
			mem.Health, mem.Reason = health(cluster, work, hash)
		}
		members = append(members, mem)
	}
	out := rolloutplan.Step(rolloutplan.Input{Stages: strategy.Spec.Stages, Members: members, Target: hash,
		Spec: run.Spec, Status: run.Status, Generation: run.Generation, Now: c.now()})
	for _, u := range out.Update {
		m[u] = hash
	}
	if out.Status.Phase.Terminal() {
		holdNewClusters(m, strategy, "")
	}
	if err := c.patchRevisions(ctx, b, m); err != nil {
		return err
	}
	if !apiequality.Semantic.DeepEqual(run.Status, out.Status) {
		updated := run.DeepCopy()
		updated.Status = out.Status
		written, err := c.client.FlotillaV1alpha1().RolloutRuns(run.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("writing the status of RolloutRun %s/%s: %w", run.Namespace, run.Name, err)
		}
		c.runWrites.Record(run.UID, run.ResourceVersion, written)
	}
	for _, e := range out.Events {
		c.recorder.Event(templates.Ref(template), e.Type, e.Reason, e.Message)
		c.recorder.Event(run, e.Type, e.Reason, e.Message)
	}
	if out.Status.Phase == flotillav1alpha1.RolloutCompleted {
		c.prune(ctx, b, m)
	}
	if out.RequeueAfter > 0 {
		c.queue.AddAfter(b.key, out.RequeueAfter)
	}
	return nil
}

// strategyOf is the RolloutStrategy the policy that claimed template names.
func (c *Controller) strategyOf(template *unstructured.Unstructured) string {
	a := template.GetAnnotations()
	if name := a[policyv1alpha1.PropagationPolicyNameAnnotation]; name != "" {
		p, err := c.pps.PropagationPolicies(a[policyv1alpha1.PropagationPolicyNamespaceAnnotation]).Get(name)
		if err != nil {
			return ""
		}
		return p.Annotations[flotillav1alpha1.RolloutStrategyAnnotation]
	}
	if name := a[policyv1alpha1.ClusterPropagationPolicyAnnotation]; name != "" {
		p, err := c.cpps.Get(name)
		if err != nil {
			return ""
		}
		return p.Annotations[flotillav1alpha1.RolloutStrategyAnnotation]
	}
	return ""
}

// patchRevisions writes the revisions annotation of b (removes it for nil
// m), when it changes.
func (c *Controller) patchRevisions(ctx context.Context, b *binding, m map[string]string) error {
	cur, had := b.annotations[flotillav1alpha1.RevisionsAnnotation]
	var value any
	var written *string
	if m != nil {
		s := rolloutplan.FormatRevisions(m)
		if had && s == cur {
			return nil
		}
		value, written = s, &s
	} else if !had {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{flotillav1alpha1.RevisionsAnnotation: value}}})
	if err != nil {
		return err
	}
	// The patch sends no resourceVersion: it may land over a version the
	// cache has not seen (the scheduler's), so the version it produced is
	// remembered too.
	var out metav1.Object
	if b.clusterWide {
		out, err = c.client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, b.name, types.MergePatchType, patch, metav1.PatchOptions{})
	} else {
		out, err = c.client.WorkV1alpha2().ResourceBindings(b.namespace).Patch(ctx, b.name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing the revisions of %s: %w", b.key, err)
	}
	c.revisionWrites.RecordWrite(b.uid, b.rv, out.GetResourceVersion(), written)
	b.annotations = maps.Clone(b.annotations)
	if b.annotations == nil {
		b.annotations = map[string]string{}
	}
	if written == nil {
		delete(b.annotations, flotillav1alpha1.RevisionsAnnotation)
	} else {
		b.annotations[flotillav1alpha1.RevisionsAnnotation] = *written
	}
	return nil
}

// revisionsOf are the ResourceRevisions of a binding, newest first.
func (c *Controller) revisionsOf(key string) []*flotillav1alpha1.ResourceRevision {
	objs, _ := c.revisions.ByIndex(byBinding, key)
	out := make([]*flotillav1alpha1.ResourceRevision, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*flotillav1alpha1.ResourceRevision))
	}
	slices.SortFunc(out, func(a, b *flotillav1alpha1.ResourceRevision) int { return int(b.Revision - a.Revision) })
	return out
}

// runsOf are the RolloutRuns of a binding, oldest first: by the revision
// number their name ends with, which grows with every change (a revision
// the template goes back to is renumbered the newest).
func (c *Controller) runsOf(key string) []*flotillav1alpha1.RolloutRun {
	objs, _ := c.runs.ByIndex(byBinding, key)
	out := make([]*flotillav1alpha1.RolloutRun, 0, len(objs))
	for _, o := range objs {
		r := o.(*flotillav1alpha1.RolloutRun)
		if w, ok := c.runWrites.Pending(r.UID, r.ResourceVersion); ok {
			r = w
		}
		out = append(out, r)
	}
	number := func(r *flotillav1alpha1.RolloutRun) int64 {
		n, _ := strconv.ParseInt(strings.TrimPrefix(r.Name, r.Spec.Binding+"-"), 10, 64)
		return n
	}
	slices.SortFunc(out, func(a, b *flotillav1alpha1.RolloutRun) int { return cmp.Compare(number(a), number(b)) })
	return out
}

// ensureRevision returns the ResourceRevision of template's content hash,
// creating it as the newest. newest raises the number of an existing
// older revision to make it the newest (the template went back to it).
func (c *Controller) ensureRevision(ctx context.Context, b *binding, template *unstructured.Unstructured, hash string, newest bool) (*flotillav1alpha1.ResourceRevision, error) {
	name := names.RevisionName(b.name, hash)
	ns := names.RolloutNamespace(template.GetNamespace())
	revs := c.revisionsOf(b.key)
	var top int64
	if len(revs) > 0 {
		top = revs[0].Revision
	}
	client := c.client.FlotillaV1alpha1().ResourceRevisions(ns)
	for _, r := range revs {
		if r.Name != name {
			continue
		}
		if !newest || r.Revision == top {
			return r, nil
		}
		updated := r.DeepCopy()
		updated.Revision = top + 1
		out, err := client.Update(ctx, updated, metav1.UpdateOptions{})
		if err != nil {
			return nil, fmt.Errorf("renumbering ResourceRevision %s/%s: %w", ns, name, err)
		}
		return out, nil
	}
	raw, err := json.Marshal(rolloutplan.Content(template))
	if err != nil {
		return nil, err
	}
	rev := &flotillav1alpha1.ResourceRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{flotillav1alpha1.BindingLabel: b.name}},
		Resource:   resourceOf(template),
		Binding:    b.name, Revision: top + 1, Hash: hash,
		Template: runtime.RawExtension{Raw: raw},
	}
	out, err := client.Create(ctx, rev, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Created by an earlier sync the cache has not seen yet.
		return client.Get(ctx, name, metav1.GetOptions{})
	} else if err != nil {
		return nil, fmt.Errorf("keeping revision %s/%s: %w", ns, name, err)
	}
	return out, nil
}

// mostRun is the revision most clusters of m run other than hash ("" when
// every cluster runs hash).
func mostRun(m map[string]string, hash string) string {
	count := map[string]int{}
	from := ""
	for c, h := range m {
		if h == hash || c == flotillav1alpha1.RevisionsAnyCluster {
			continue
		}
		count[h]++
		if from == "" || count[h] > count[from] || (count[h] == count[from] && h < from) {
			from = h
		}
	}
	return from
}

// holdNewClusters sets the entry of m for clusters new to the placement: the
// run's from revision while a run is in progress under a strategy holding
// new clusters in their stage; none otherwise.
func holdNewClusters(m map[string]string, strategy *flotillav1alpha1.RolloutStrategy, from string) {
	if from != "" && strategy.Spec.NewClusters == flotillav1alpha1.NewClustersInStage {
		m[flotillav1alpha1.RevisionsAnyCluster] = from
		return
	}
	delete(m, flotillav1alpha1.RevisionsAnyCluster)
}

// createRun starts the RolloutRun of revision rev from the revision hash
// from.
func (c *Controller) createRun(ctx context.Context, b *binding, template *unstructured.Unstructured, strategy string,
	rev *flotillav1alpha1.ResourceRevision, from string) error {
	run := &flotillav1alpha1.RolloutRun{
		ObjectMeta: metav1.ObjectMeta{Name: names.RolloutRunName(b.name, rev.Revision), Namespace: rev.Namespace,
			Labels: map[string]string{flotillav1alpha1.BindingLabel: b.name}},
		Spec: flotillav1alpha1.RolloutRunSpec{Resource: resourceOf(template), Binding: b.name, Strategy: strategy, ToRevision: rev.Name},
	}
	if from != "" {
		run.Spec.FromRevision = names.RevisionName(b.name, from)
	}
	c.created.Store(b.key, createdRun{name: run.Name, at: c.now()})
	_, err := c.client.FlotillaV1alpha1().RolloutRuns(rev.Namespace).Create(ctx, run, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	} else if err != nil {
		c.created.Delete(b.key)
		return fmt.Errorf("starting RolloutRun %s/%s: %w", run.Namespace, run.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Started a rollout", "run", klog.KObj(run), "to", rev.Name)
	return nil
}

// supersede ends a run whose revision is no longer the template's: a new
// change starts its own run from the first stage.
func (c *Controller) supersede(ctx context.Context, run *flotillav1alpha1.RolloutRun, template *unstructured.Unstructured) error {
	updated := run.DeepCopy()
	now := metav1.NewTime(c.now())
	updated.Status.Phase = flotillav1alpha1.RolloutSuperseded
	updated.Status.CompletionTime = &now
	msg := "The template changed again; its new revision is rolled out by a new run"
	meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{Type: flotillav1alpha1.RolloutConditionProgressing,
		Status: metav1.ConditionFalse, Reason: string(flotillav1alpha1.RolloutSuperseded), Message: msg, LastTransitionTime: now})
	written, err := c.client.FlotillaV1alpha1().RolloutRuns(run.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("superseding RolloutRun %s/%s: %w", run.Namespace, run.Name, err)
	}
	c.runWrites.Record(run.UID, run.ResourceVersion, written)
	c.recorder.Event(run, corev1.EventTypeNormal, reasonRolloutSuperseded, msg)
	c.recorder.Event(templates.Ref(template), corev1.EventTypeNormal, reasonRolloutSuperseded, fmt.Sprintf("RolloutRun %s superseded: %s", run.Name, msg))
	return nil
}

// prune keeps the revisions clusters run and the newest of the others up
// to DefaultRevisionHistoryLimit, and the newest runs, deleting the rest.
func (c *Controller) prune(ctx context.Context, b *binding, m map[string]string) {
	logger := klog.FromContext(ctx)
	inUse := map[string]bool{}
	for _, h := range m {
		inUse[names.RevisionName(b.name, h)] = true
	}
	kept := 0
	for _, r := range c.revisionsOf(b.key) {
		if inUse[r.Name] {
			continue
		}
		if kept < flotillav1alpha1.DefaultRevisionHistoryLimit {
			kept++
			continue
		}
		if err := c.client.FlotillaV1alpha1().ResourceRevisions(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			logger.Error(err, "Pruning a revision", "revision", klog.KObj(r))
		}
	}
	runs := c.runsOf(b.key)
	for i := 0; i < len(runs)-runsKept; i++ {
		if r := runs[i]; r.Status.Phase.Terminal() {
			if err := c.client.FlotillaV1alpha1().RolloutRuns(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				logger.Error(err, "Pruning a run", "run", klog.KObj(r))
			}
		}
	}
}

// cleanup deletes the revisions and runs of a binding that is gone.
func (c *Controller) cleanup(ctx context.Context, key string) error {
	var errs []error
	for _, r := range c.revisionsOf(key) {
		if err := c.client.FlotillaV1alpha1().ResourceRevisions(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	for _, r := range c.runsOf(key) {
		if err := c.client.FlotillaV1alpha1().RolloutRuns(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func resourceOf(obj *unstructured.Unstructured) flotillav1alpha1.RolloutResource {
	return flotillav1alpha1.RolloutResource{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
		Name: obj.GetName(), UID: obj.GetUID()}
}
