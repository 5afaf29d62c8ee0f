// Package unifiedauth grants each member's impersonator service account
// exactly the identities that host RBAC lets reach that cluster through
// clusters/proxy (or search's proxying/proxy), so the member sees — and its
// own RBAC judges — the real caller.
package unifiedauth

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	rbacapply "k8s.io/client-go/applyconfigurations/rbac/v1"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/memberclient"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "unified-auth"

// ImpersonatorName names the member ClusterRole, its binding and the
// impersonator service account.
const ImpersonatorName = "karmada-impersonator"

// Controller keeps the member impersonation RBAC in step with host RBAC.
type Controller struct {
	clusters    clusterlisters.ClusterLister
	roles       rbaclisters.ClusterRoleLister
	bindings    rbaclisters.ClusterRoleBindingLister
	synced      []cache.InformerSynced
	members     *memberclient.Cache
	queue       workqueue.TypedRateLimitingInterface[string]
	mu          sync.Mutex
	lastApplied map[string]string // cluster -> fingerprint of the rules applied, to skip no-op writes
}

// New returns the controller.
func New(clusters clusterinformers.ClusterInformer, roles rbacinformers.ClusterRoleInformer, bindings rbacinformers.ClusterRoleBindingInformer, members *memberclient.Cache) (*Controller, error) {
	c := &Controller{
		clusters: clusters.Lister(), roles: roles.Lister(), bindings: bindings.Lister(), members: members,
		synced:      []cache.InformerSynced{clusters.Informer().HasSynced, roles.Informer().HasSynced, bindings.Informer().HasSynced},
		queue:       worker.NewQueue(ControllerName),
		lastApplied: map[string]string{},
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
	return c, nil
}

// fingerprintAnnotation on the member ClusterRoleBinding holds a hash of
// the rules and subject last applied.
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
		c.mu.Lock()
		delete(c.lastApplied, name)
		c.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	if cluster.DeletionTimestamp != nil || cluster.Spec.ImpersonatorSecretRef == nil || cluster.Spec.SyncMode != clusterv1alpha1.Push {
		return nil
	}
	rules, err := c.impersonationRules(name)
	if err != nil {
		return err
	}
	fingerprint := fmt.Sprint(rules, cluster.Spec.ImpersonatorSecretRef.Namespace)
	c.mu.Lock()
	same := c.lastApplied[name] == fingerprint
	c.mu.Unlock()
	if same {
		return nil
	}
	client, err := c.members.Get(cluster)
	if err != nil {
		return err
	}
	// The binding, applied last, records what was applied: after a restart
	// one read replaces two writes per member.
	hash := fmt.Sprintf("%x", fnv64(fingerprint))
	if b, err := client.Clientset.RbacV1().ClusterRoleBindings().Get(ctx, ImpersonatorName, metav1.GetOptions{}); err == nil &&
		b.Annotations[fingerprintAnnotation] == hash {
		c.mu.Lock()
		c.lastApplied[name] = fingerprint
		c.mu.Unlock()
		return nil
	}
	opts := metav1.ApplyOptions{FieldManager: ControllerName, Force: true}
	role := rbacapply.ClusterRole(ImpersonatorName).WithLabels(map[string]string{"karmada.io/managed": "true"})
	for _, r := range rules {
		role.WithRules(rbacapply.PolicyRule().WithAPIGroups(r.APIGroups...).WithResources(r.Resources...).WithResourceNames(r.ResourceNames...).WithVerbs(r.Verbs...))
	}
	if _, err := client.Clientset.RbacV1().ClusterRoles().Apply(ctx, role, opts); err != nil {
		return fmt.Errorf("applying ClusterRole %s in %s: %w", ImpersonatorName, name, err)
	}
	binding := rbacapply.ClusterRoleBinding(ImpersonatorName).WithLabels(map[string]string{"karmada.io/managed": "true"}).
		WithAnnotations(map[string]string{fingerprintAnnotation: hash}).
		WithRoleRef(rbacapply.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(ImpersonatorName)).
		WithSubjects(rbacapply.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(ImpersonatorName).WithNamespace(cluster.Spec.ImpersonatorSecretRef.Namespace))
	if _, err := client.Clientset.RbacV1().ClusterRoleBindings().Apply(ctx, binding, opts); err != nil {
		return fmt.Errorf("applying ClusterRoleBinding %s in %s: %w", ImpersonatorName, name, err)
	}
	c.mu.Lock()
	c.lastApplied[name] = fingerprint
	c.mu.Unlock()
	return nil
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
func Cleanup(members *memberclient.Cache) func(context.Context, *clusterv1alpha1.Cluster) error {
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
