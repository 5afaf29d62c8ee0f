// Package unifiedauth grants each member's impersonator service account
// exactly the identities that host RBAC lets reach that cluster through
// clusters/proxy (or search's proxying/proxy), so the member sees — and its
// own RBAC judges — the real caller.
package unifiedauth

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/names"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
	"github.com/flotilla-io/flotilla/member"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "unified-auth"

// ImpersonatorName names the member ClusterRole, its binding and the
// impersonator service account.
const ImpersonatorName = "karmada-impersonator"

// Controller keeps the member impersonation RBAC in step with host RBAC.
// The ClusterRole and ClusterRoleBinding are shipped as Works into the
// cluster's execution namespace, owned by the Cluster, as Karmada does
// (API-SPEC §2.2): the execution controller applies them to push members,
// flotilla-agent to pull members.
type Controller struct {
	clusters clusterlisters.ClusterLister
	roles    rbaclisters.ClusterRoleLister
	bindings rbaclisters.ClusterRoleBindingLister
	works    worklisters.WorkLister
	client   versioned.Interface
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
}

// Event reasons on Clusters, Karmada's (API-SPEC §14).
const (
	EventReasonSyncImpersonationConfigSucceed = "SyncImpersonationConfigSucceed"
	EventReasonSyncImpersonationConfigFailed  = "SyncImpersonationConfigFailed"
)

// New returns the controller.
func New(clusters clusterinformers.ClusterInformer, roles rbacinformers.ClusterRoleInformer, bindings rbacinformers.ClusterRoleBindingInformer,
	works workinformers.WorkInformer, client versioned.Interface, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		recorder: recorder,
		clusters: clusters.Lister(), roles: roles.Lister(), bindings: bindings.Lister(), works: works.Lister(), client: client,
		synced: []cache.InformerSynced{clusters.Informer().HasSynced, roles.Informer().HasSynced, bindings.Informer().HasSynced,
			works.Informer().HasSynced},
		queue: worker.NewQueue(ControllerName),
	}
	onCluster := worker.EnqueueKey(c.queue)
	// Any RBAC change may change who may proxy to any cluster.
	all := func(any) { c.enqueueAll() }
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onCluster, UpdateFunc: func(_, o any) { onCluster(o) }}); err != nil {
		return nil, err
	}
	for _, inf := range []cache.SharedIndexInformer{roles.Informer(), bindings.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: all, UpdateFunc: func(_, o any) { all(o) }, DeleteFunc: all}); err != nil {
			return nil, err
		}
	}
	// A Work changed or removed by someone else is put back.
	onWork := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if w, ok := obj.(*workv1alpha1.Work); ok && w.Annotations[fingerprintAnnotation] != "" {
			if cluster, ok := names.ClusterOf(w.Namespace); ok {
				c.queue.Add(cluster)
			}
		}
	}
	// Status writes of the execution controller change neither.
	changed := func(old, cur any) {
		o, ok1 := old.(*workv1alpha1.Work)
		n, ok2 := cur.(*workv1alpha1.Work)
		if ok1 && ok2 && (o.Generation != n.Generation || o.Annotations[fingerprintAnnotation] != n.Annotations[fingerprintAnnotation]) {
			onWork(cur)
		}
	}
	if _, err := works.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: changed, DeleteFunc: onWork}); err != nil {
		return nil, err
	}
	return c, nil
}

// fingerprintAnnotation on each Work holds a hash of the rules and subject
// it carries: it marks the Works this controller writes, and changes with
// what they carry.
const fingerprintAnnotation = "unifiedauth.flotilla.io/applied"

func fnv64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

func (c *Controller) enqueueAll() {
	list, err := c.clusters.List(labels.Everything())
	if err != nil {
		return
	}
	for _, cl := range list {
		c.queue.Add(cl.Name)
	}
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

func (c *Controller) reconcile(ctx context.Context, name string) error {
	cluster, err := c.clusters.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cluster.DeletionTimestamp != nil || cluster.Spec.ImpersonatorSecretRef == nil {
		return nil
	}
	rules, err := c.impersonationRules(name)
	if err != nil {
		return err
	}
	managed := map[string]string{"karmada.io/managed": "true"}
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ImpersonatorName, Labels: managed},
		Rules:      rules,
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: ImpersonatorName, Labels: managed},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ImpersonatorName},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ImpersonatorName,
			Namespace: cluster.Spec.ImpersonatorSecretRef.Namespace}},
	}
	wroteRole, err := c.ensureWork(ctx, cluster, "ClusterRole", role)
	wroteBinding := false
	if err == nil {
		wroteBinding, err = c.ensureWork(ctx, cluster, "ClusterRoleBinding", binding)
	}
	switch {
	case err != nil:
		c.event(cluster, corev1.EventTypeWarning, EventReasonSyncImpersonationConfigFailed, fmt.Sprintf("Failed to sync impersonation config, err: %v", err))
	case wroteRole || wroteBinding:
		c.event(cluster, corev1.EventTypeNormal, EventReasonSyncImpersonationConfigSucceed, "Sync impersonation config succeed.")
	}
	return err
}

func (c *Controller) event(cluster *clusterv1alpha1.Cluster, eventType, reason, msg string) {
	if c.recorder != nil {
		c.recorder.Event(cluster, eventType, reason, msg)
	}
}

// ensureWork creates or updates the Work carrying obj, the cluster-scoped
// kind called ImpersonatorName, to the cluster; a Work whose fingerprint
// matches is left alone. wrote tells whether it wrote.
func (c *Controller) ensureWork(ctx context.Context, cluster *clusterv1alpha1.Cluster, kind string, obj any) (bool, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return false, err
	}
	hash := fmt.Sprintf("%x", fnv64(string(raw)))
	ns := names.ExecutionNamespace(cluster.Name)
	name := names.WorkName(kind, ImpersonatorName, "")
	annotations := map[string]string{
		fingerprintAnnotation: hash,
		// These objects are the control plane's own: they replace whatever
		// an older Flotilla applied under the same name.
		workv1alpha2.ResourceConflictResolutionAnnotation: workv1alpha2.ResourceConflictResolutionOverwrite,
	}
	work := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Annotations: annotations,
			Finalizers:      []string{workv1alpha1.ExecutionControllerFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cluster, clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"))},
		},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
	cur, err := c.works.Works(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return true, works.Write(ctx, c.client, nil, work, ControllerName)
	}
	if err != nil {
		return false, err
	}
	// Compared as the server stores it: the stored labels (the permanent
	// id) kept, the manifests mutated.
	work.Labels = maps.Clone(cur.Labels)
	if err := mutation.MutateWork(work, false); err != nil {
		return false, err
	}
	if works.Needless(cur, work) {
		return false, nil
	}
	return true, works.Write(ctx, c.client, cur, work, ControllerName)
}

// impersonationRules computes the member rules: impersonate exactly the
// users, service accounts and groups that host RBAC allows to proxy to the
// cluster, plus the UIDs and extras the proxy forwards for them.
func (c *Controller) impersonationRules(cluster string) ([]rbacv1.PolicyRule, error) {
	bindings, err := c.bindings.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	users, groups, sas := sets.New[string](), sets.New[string](), sets.New[string]()
	// A group may proxy: its members cannot be listed, so any user may be
	// impersonated, but only with the groups granted below.
	anyUser := false
	for _, b := range bindings {
		if b.RoleRef.Kind != "ClusterRole" {
			continue
		}
		role, err := c.roles.Get(b.RoleRef.Name)
		if err != nil || !grantsProxy(role.Rules, cluster) {
			continue
		}
		for _, s := range b.Subjects {
			switch s.Kind {
			case rbacv1.UserKind:
				users.Insert(s.Name)
			case rbacv1.GroupKind:
				groups.Insert(s.Name)
				anyUser = true
			case rbacv1.ServiceAccountKind:
				sas.Insert(s.Name)
				users.Insert("system:serviceaccount:" + s.Namespace + ":" + s.Name)
				// The proxy forwards a service account's groups too.
				groups.Insert("system:serviceaccounts", "system:serviceaccounts:"+s.Namespace)
			}
		}
	}
	var rules []rbacv1.PolicyRule
	add := func(group, resource string, names sets.Set[string]) {
		if names.Len() > 0 {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, ResourceNames: sorted(names), Verbs: []string{"impersonate"}})
		}
	}
	if anyUser {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}})
	} else {
		add("", "users", users)
	}
	add("", "serviceaccounts", sas)
	add("", "groups", groups)
	if users.Len() > 0 || anyUser {
		// The proxy forwards the caller's UID and extras (a service account's
		// credential id, OIDC claims). RBAC cannot wildcard the extra keys
		// (userextras/<key>), so every resource of authentication.k8s.io is
		// granted, with only the impersonate verb: the user and groups above
		// still bound who can be impersonated.
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"impersonate"}})
	}
	return rules, nil
}

// grantsProxy reports whether rules allow clusters/proxy on cluster (or the
// search proxying/proxy, which reaches every cluster).
func grantsProxy(rules []rbacv1.PolicyRule, cluster string) bool {
	for _, r := range rules {
		if len(r.Verbs) == 0 {
			continue
		}
		match := func(group string, resources ...string) bool {
			if !slices.Contains(r.APIGroups, group) && !slices.Contains(r.APIGroups, "*") {
				return false
			}
			for _, res := range resources {
				if slices.Contains(r.Resources, res) {
					return true
				}
			}
			return slices.Contains(r.Resources, "*")
		}
		if match("cluster.karmada.io", "clusters/proxy", "clusters/*") && (len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, cluster)) {
			return true
		}
		if match("search.karmada.io", "proxying/proxy", "proxying/*") {
			return true
		}
	}
	return false
}

func sorted(s sets.Set[string]) []string {
	l := s.UnsortedList()
	sort.Strings(l)
	return l
}

// Cleanup deletes the impersonation RBAC from a member being removed.
func Cleanup(members *member.Cache) func(context.Context, *clusterv1alpha1.Cluster) error {
	return func(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
		if cluster.Spec.ImpersonatorSecretRef == nil {
			return nil
		}
		client, err := members.Get(cluster)
		if err != nil {
			return err
		}
		rbac := client.Clientset.RbacV1()
		if err := rbac.ClusterRoleBindings().Delete(ctx, ImpersonatorName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err := rbac.ClusterRoles().Delete(ctx, ImpersonatorName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}
}
