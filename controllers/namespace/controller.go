// Package namespace propagates the namespaces of the control plane to every
// member cluster (Karmada's namespace sync controller): each namespace that
// is not reserved or skipped becomes a Work in every cluster's execution
// namespace, with the ClusterOverridePolicies applied; its deletion removes
// the Works, and so the member namespaces Flotilla created.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	policyinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/policy/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/overrides"
)

// ControllerName is the name of the controller in --controllers.
const ControllerName = "namespace"

// Keys Karmada uses on propagated namespaces.
const (
	executionFinalizer    = workv1alpha1.ExecutionControllerFinalizer
	DefaultSkippedPattern = "kube-.*"
)

// OverrideFunc applies the ClusterOverridePolicies for cluster to obj in
// place and returns the annotations recording what was applied.
type OverrideFunc func(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster,
	cops []*policyv1alpha1.ClusterOverridePolicy) (map[string]string, error)

// ApplyClusterOverrides is the OverrideFunc of Flotilla: the
// ClusterOverridePolicies selecting the namespace are applied for the
// cluster, as Karmada's namespace sync controller does when it builds the
// Works (OverridePolicies are namespaced and never select a Namespace).
func ApplyClusterOverrides(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster,
	cops []*policyv1alpha1.ClusterOverridePolicy) (map[string]string, error) {
	return overrides.Apply(obj, cluster, cops, nil)
}

// Controller is the namespace sync controller.
type Controller struct {
	namespaces corelisters.NamespaceLister
	clusters   clusterlisters.ClusterLister
	works      worklisters.WorkLister
	cops       policylisters.ClusterOverridePolicyLister
	synced     []cache.InformerSynced
	client     versioned.Interface
	overrides  OverrideFunc
	skipped    []*regexp.Regexp
	queue      workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller; skipped are regular expressions of namespace
// names never propagated (--skipped-propagating-namespaces; anchored).
func New(namespaces coreinformers.NamespaceInformer, clusters clusterinformers.ClusterInformer, works workinformers.WorkInformer,
	cops policyinformers.ClusterOverridePolicyInformer, client versioned.Interface, overrides OverrideFunc, skipped []string) (*Controller, error) {
	c, err := newSkipper(skipped)
	if err != nil {
		return nil, err
	}
	*c = Controller{
		skipped:    c.skipped,
		namespaces: namespaces.Lister(), clusters: clusters.Lister(), works: works.Lister(), cops: cops.Lister(),
		synced: []cache.InformerSynced{namespaces.Informer().HasSynced, clusters.Informer().HasSynced, works.Informer().HasSynced,
			cops.Informer().HasSynced},
		client: client, overrides: overrides, queue: worker.NewQueue(ControllerName),
	}
	add := worker.EnqueueKey(c.queue)
	if _, err := namespaces.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: add, UpdateFunc: func(_, o any) { add(o) }, DeleteFunc: add,
	}); err != nil {
		return nil, err
	}
	all := func(any) { c.enqueueAll() }
	for _, inf := range []cache.SharedIndexInformer{clusters.Informer(), cops.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: all, UpdateFunc: func(o, n any) {
			if oc, ok := o.(*clusterv1alpha1.Cluster); ok {
				nc := n.(*clusterv1alpha1.Cluster)
				if labels.Equals(oc.Labels, nc.Labels) && (oc.DeletionTimestamp == nil) == (nc.DeletionTimestamp == nil) {
					return
				}
			}
			all(n)
		}, DeleteFunc: all}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// newSkipper returns a controller that only knows the skipped patterns.
func newSkipper(skipped []string) (*Controller, error) {
	c := &Controller{}
	for _, s := range skipped {
		re, err := regexp.Compile("^(?:" + s + ")$")
		if err != nil {
			return nil, fmt.Errorf("skipped namespace pattern %q: %w", s, err)
		}
		c.skipped = append(c.skipped, re)
	}
	return c, nil
}

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

func (c *Controller) enqueueAll() {
	list, err := c.namespaces.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ns := range list {
		c.queue.Add(ns.Name)
	}
}

// Skip tells whether a namespace is never propagated automatically
// (docs/compatibility.md, Namespaces and deletion protection): reserved,
// default, skipped by pattern or by label.
func (c *Controller) Skip(ns *corev1.Namespace) bool {
	name := ns.Name
	if name == "default" || name == names.SystemNamespace || name == names.SecretNamespace || strings.HasPrefix(name, names.ExecutionNamespacePrefix) {
		return true
	}
	for _, re := range c.skipped {
		if re.MatchString(name) {
			return true
		}
	}
	if ns.Labels[policyv1alpha1.NamespaceSkipAutoPropagationLabel] == "true" {
		return true
	}
	// A namespace claimed by a ClusterPropagationPolicy follows its policy.
	return ns.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] != ""
}

func (c *Controller) reconcile(ctx context.Context, name string) error {
	ns, err := c.namespaces.Get(name)
	if apierrors.IsNotFound(err) || (err == nil && ns.DeletionTimestamp != nil) {
		return c.removeWorks(ctx, name)
	}
	if err != nil {
		return err
	}
	if c.Skip(ns) {
		return nil
	}
	clusters, err := c.clusters.List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	for _, cl := range clusters {
		if cl.DeletionTimestamp != nil {
			continue
		}
		if err := c.syncWork(ctx, ns, cl); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) syncWork(ctx context.Context, ns *corev1.Namespace, cluster *clusterv1alpha1.Cluster) error {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ns)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: raw}
	obj.SetAPIVersion("v1")
	obj.SetKind("Namespace")
	unstructured.RemoveNestedField(obj.Object, "spec")
	annos := map[string]string{}
	if c.overrides != nil {
		cops, _ := c.cops.List(labels.Everything())
		if annos, err = c.overrides(obj, cluster, cops); err != nil {
			return err
		}
	}
	if err := mutation.PruneManifest(obj); err != nil {
		return err
	}
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[workv1alpha1.ManagedByKarmadaLabel] = "true"
	obj.SetLabels(l)
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	workNS, workName := names.ExecutionNamespace(cluster.Name), names.WorkName("Namespace", ns.Name, "")
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: workName, Namespace: workNS, Annotations: annos, Finalizers: []string{executionFinalizer}},
		Spec:       workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: data}}}}},
	}
	cur, err := c.works.Works(workNS).Get(workName)
	if apierrors.IsNotFound(err) {
		// An error here (cache behind, execution namespace not made yet)
		// is retried.
		_, err := works.Write(ctx, c.client, nil, w, "")
		return err
	}
	if err != nil {
		return err
	}
	// The stored labels (the permanent id) stay; the spec is compared as
	// the server defaults it.
	w.Labels = map[string]string{}
	for k, v := range cur.Labels {
		w.Labels[k] = v
	}
	if err := mutation.MutateWork(w, false); err != nil {
		return err
	}
	return works.Ensure(ctx, c.client, cur, w, "")
}

// removeWorks deletes the namespace's Works in every cluster.
func (c *Controller) removeWorks(ctx context.Context, name string) error {
	clusters, err := c.clusters.List(labels.Everything())
	if err != nil {
		return err
	}
	workName := names.WorkName("Namespace", name, "")
	var errs []error
	for _, cl := range clusters {
		ns := names.ExecutionNamespace(cl.Name)
		if w, err := c.works.Works(ns).Get(workName); err != nil || w.DeletionTimestamp != nil {
			continue
		}
		if err := c.client.WorkV1alpha1().Works(ns).Delete(ctx, workName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
