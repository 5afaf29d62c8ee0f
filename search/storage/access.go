package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	searchcache "github.com/flotilla-io/flotilla/search/cache"
)

// Access decides what of the cache a user may read, beyond Karmada (which
// serves every cached object to anyone allowed proxying/proxy):
//   - only objects of clusters the user may reach through
//     clusters/{name}/proxy, per the control plane's RBAC;
//   - only what the member's own RBAC lets the user read, asked with a
//     SubjectAccessReview in the member (unless MemberCheck is off) and
//     remembered briefly per user, cluster, resource, namespace and verb.
type Access struct {
	// Host authorizes on the control plane (the server's delegating authorizer).
	Host authorizer.Authorizer
	// MemberReview asks a member whether a user may do something there;
	// nil switches the member check off (trusted setups).
	MemberReview func(ctx context.Context, cluster string, sar *authorizationv1.SubjectAccessReview) (bool, error)
	// TTL is how long a member's answer is remembered (default 10s).
	TTL time.Duration

	once    sync.Once
	answers *cache.LRUExpireCache
}

// Scope is what a user may read of one store: everything, or the objects
// of some namespaces.
type Scope struct {
	All        bool
	Namespaces sets.Set[string]
}

func (s Scope) allows(namespace string) bool {
	return s.All || s.Namespaces.Has(namespace)
}

func (s Scope) empty() bool { return !s.All && s.Namespaces.Len() == 0 }

// Filter returns, for each store, what u may read with verb (get, list or
// watch) in namespace ("" for all namespaces); stores u may not read at
// all are left out.
func (a *Access) Filter(ctx context.Context, u user.Info, verb, namespace string, stores []*searchcache.Store) map[*searchcache.Store]Scope {
	a.once.Do(func() {
		if a.TTL <= 0 {
			a.TTL = 10 * time.Second
		}
		a.answers = cache.NewLRUExpireCache(16384)
	})
	out := map[*searchcache.Store]Scope{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Go(func() {
			sc := a.scope(ctx, u, verb, namespace, s)
			if sc.empty() {
				return
			}
			mu.Lock()
			out[s] = sc
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// scope is what u may read of one store.
func (a *Access) scope(ctx context.Context, u user.Info, verb, namespace string, s *searchcache.Store) Scope {
	if !a.ClusterAllowed(ctx, u, s.Cluster) {
		return Scope{}
	}
	if a.MemberReview == nil {
		return Scope{All: true}
	}
	if !s.Namespaced {
		namespace = ""
	}
	if a.memberAllows(ctx, u, verb, namespace, s) {
		if namespace == "" {
			return Scope{All: true}
		}
		return Scope{Namespaces: sets.New(namespace)}
	}
	if namespace != "" || !s.Namespaced {
		return Scope{}
	}
	// Not allowed in all namespaces: maybe in some of those holding objects.
	allowed := sets.New[string]()
	for _, ns := range s.Namespaces() {
		if a.memberAllows(ctx, u, verb, ns, s) {
			allowed.Insert(ns)
		}
	}
	return Scope{Namespaces: allowed}
}

// ClusterAllowed asks the control plane whether u may reach the cluster
// through clusters/{name}/proxy.
func (a *Access) ClusterAllowed(ctx context.Context, u user.Info, cluster string) bool {
	decision, _, err := a.Host.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: "get", APIGroup: clusterv1alpha1.GroupName, APIVersion: clusterv1alpha1.SchemeGroupVersion.Version,
		Resource: "clusters", Subresource: "proxy", Name: cluster, ResourceRequest: true,
	})
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Authorizing cluster access", "cluster", cluster, "user", u.GetName(), "err", err)
	}
	return decision == authorizer.DecisionAllow
}

// memberAllows asks the member (or remembers) whether u may verb the
// store's resource in namespace.
func (a *Access) memberAllows(ctx context.Context, u user.Info, verb, namespace string, s *searchcache.Store) bool {
	key := strings.Join([]string{u.GetName(), u.GetUID(), strings.Join(sortedGroups(u), ","), fmt.Sprint(u.GetExtra()),
		s.Cluster, s.Resource.Group, s.Resource.Resource, namespace, verb}, "\x00")
	if v, ok := a.answers.Get(key); ok {
		return v.(bool)
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.GetExtra() {
		extra[k] = v
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Group: s.Resource.Group, Version: s.Resource.Version, Resource: s.Resource.Resource, Namespace: namespace,
		},
	}}
	allowed, err := a.MemberReview(ctx, s.Cluster, sar)
	if err != nil {
		// Not remembered: the next request asks again.
		klog.FromContext(ctx).V(2).Info("Member access review failed", "cluster", s.Cluster, "user", u.GetName(), "err", err)
		return false
	}
	a.answers.Add(key, allowed, a.TTL)
	return allowed
}

func sortedGroups(u user.Info) []string {
	g := slices.Clone(u.GetGroups())
	slices.Sort(g)
	return g
}
