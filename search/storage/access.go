package storage

import (
	"context"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	memberaccess "github.com/flotilla-io/flotilla/member/access"
	searchcache "github.com/flotilla-io/flotilla/search/cache"
)

// Access decides what of the cache a user may read, beyond Karmada (which
// serves every cached object to anyone allowed proxying/proxy):
//   - only objects of clusters the user may reach through
//     clusters/{name}/proxy, per the control plane's RBAC;
//   - only what the member's own RBAC lets the user read, asked with a
//     SubjectAccessReview in the member (unless MemberCheck is off) and
//     remembered briefly per user, cluster, resource, namespace and verb.
//
// The decision itself is memberaccess's, shared with the metrics APIs;
// Access maps it onto the cache's stores. One read sends at most
// memberaccess.MaxMemberReviewsPerRequest reviews to members: what was not
// checked is left out, with a warning.
type Access struct {
	// Host authorizes on the control plane (the server's delegating authorizer).
	Host authorizer.Authorizer
	// MemberReview asks a member whether a user may do something there;
	// nil switches the member check off (trusted setups).
	MemberReview memberaccess.Reviewer
	// TTL is how long a member's answer is remembered (default 10s).
	TTL time.Duration

	once    sync.Once
	checker *memberaccess.Checker
}

// check returns the checker built from the fields on first use.
func (a *Access) check() *memberaccess.Checker {
	a.once.Do(func() {
		a.checker = &memberaccess.Checker{Host: a.Host, MemberReview: a.MemberReview, TTL: a.TTL}
	})
	return a.checker
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
	req := a.check().Request(u)
	out := map[*searchcache.Store]Scope{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Go(func() {
			sc := scope(ctx, req, verb, namespace, s)
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

// scope is what the user of req may read of one store.
func scope(ctx context.Context, req *memberaccess.Request, verb, namespace string, s *searchcache.Store) Scope {
	if !req.ClusterAllowed(ctx, s.Cluster) {
		return Scope{}
	}
	if !req.MemberChecks() {
		return Scope{All: true}
	}
	if !s.Namespaced {
		namespace = ""
	}
	attrs := func(ns string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{
			Verb: verb, Group: s.Resource.Group, Version: s.Resource.Version, Resource: s.Resource.Resource, Namespace: ns,
		}
	}
	if req.MemberAllows(ctx, s.Cluster, attrs(namespace)) {
		if namespace == "" {
			return Scope{All: true}
		}
		return Scope{Namespaces: sets.New(namespace)}
	}
	if namespace != "" || !s.Namespaced {
		return Scope{}
	}
	// Not allowed in all namespaces: maybe in some of those holding objects
	// (as many as the request's reviews allow).
	allowed := sets.New[string]()
	for _, ns := range s.Namespaces() {
		if req.MemberAllows(ctx, s.Cluster, attrs(ns)) {
			allowed.Insert(ns)
		}
	}
	return Scope{Namespaces: allowed}
}

// ClusterAllowed asks the control plane whether u may reach the cluster
// through clusters/{name}/proxy.
func (a *Access) ClusterAllowed(ctx context.Context, u user.Info, cluster string) bool {
	return a.check().ClusterAllowed(ctx, u, cluster)
}
