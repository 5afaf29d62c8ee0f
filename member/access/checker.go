package access

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

const (
	// MaxMemberReviewsPerRequest bounds the SubjectAccessReviews one
	// request sends to members. Each is a round trip to a member (up to
	// reviewTimeout), and a request asking about every namespace of every
	// cluster would otherwise send one per namespace and cluster.
	MaxMemberReviewsPerRequest = 32
	// DefaultTTL is how long a member's answer is remembered: long enough
	// for a burst of requests (a dashboard, kubectl top in a loop), short
	// enough that a revoked binding stops counting soon.
	DefaultTTL = 10 * time.Second
	// cacheSize bounds the answers remembered, across users.
	cacheSize = 16384
)

// Reviewer asks a member whether the user in sar may do what sar says there.
type Reviewer func(ctx context.Context, cluster string, sar *authorizationv1.SubjectAccessReview) (bool, error)

// Checker holds the answers of members, shared by every request. Set its
// fields before the first use; the zero TTL and MaxReviews mean the
// defaults.
type Checker struct {
	// Host authorizes on the control plane (the server's delegating
	// authorizer). Required: without it no cluster is allowed.
	Host authorizer.Authorizer
	// MemberReview asks members; nil switches the member check off (trusted
	// setups), leaving the control plane's check alone.
	MemberReview Reviewer
	// TTL is how long a member's answer is remembered (default DefaultTTL).
	TTL time.Duration
	// MaxReviews bounds the member reviews of one request (default
	// MaxMemberReviewsPerRequest).
	MaxReviews int

	once    sync.Once
	answers *cache.LRUExpireCache
}

func (c *Checker) init() {
	c.once.Do(func() {
		if c.TTL <= 0 {
			c.TTL = DefaultTTL
		}
		if c.MaxReviews <= 0 {
			c.MaxReviews = MaxMemberReviewsPerRequest
		}
		c.answers = cache.NewLRUExpireCache(cacheSize)
	})
}

// ClusterAllowed asks the control plane whether u may reach the cluster
// through clusters/{name}/proxy. An authorizer error counts as a denial.
func (c *Checker) ClusterAllowed(ctx context.Context, u user.Info, cluster string) bool {
	if c.Host == nil || u == nil {
		return false
	}
	decision, _, err := c.Host.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: "get", APIGroup: clusterv1alpha1.GroupName, APIVersion: clusterv1alpha1.SchemeGroupVersion.Version,
		Resource: "clusters", Subresource: "proxy", Name: cluster, ResourceRequest: true,
	})
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Authorizing cluster access", "cluster", cluster, "user", u.GetName(), "err", err)
	}
	return decision == authorizer.DecisionAllow
}

// Request starts the checks of one request made by u: its member reviews
// share one budget of MaxReviews.
func (c *Checker) Request(u user.Info) *Request {
	c.init()
	return &Request{checker: c, user: u, userKey: userKey(u), asked: map[string]*pending{}}
}

// Request is the checks of one request. It is safe for concurrent use.
type Request struct {
	checker *Checker
	user    user.Info
	userKey string

	mu sync.Mutex
	// asked holds the reviews this request sent (or is sending), so that
	// concurrent checks of the same attributes send one review and count
	// once.
	asked     map[string]*pending
	truncated bool
}

// pending is one member review of a request; done closes once allowed is set.
type pending struct {
	done    chan struct{}
	allowed bool
}

// ClusterAllowed says whether the user may reach the cluster through
// clusters/{name}/proxy on the control plane.
func (r *Request) ClusterAllowed(ctx context.Context, cluster string) bool {
	return r.checker.ClusterAllowed(ctx, r.user, cluster)
}

// MemberChecks says whether members are asked at all; without, MemberAllows
// is always true.
func (r *Request) MemberChecks() bool { return r.checker.MemberReview != nil }

// Allows says whether the user may reach the cluster and the member lets it
// do attrs there.
func (r *Request) Allows(ctx context.Context, cluster string, attrs authorizationv1.ResourceAttributes) bool {
	return r.ClusterAllowed(ctx, cluster) && r.MemberAllows(ctx, cluster, attrs)
}

// MemberAllows says whether the member lets the user do attrs. A remembered
// answer is used when there is one; otherwise the member is asked, unless
// the request has used up its reviews, in which case the answer is no and
// the response gets a warning. A failed review is a no, not remembered.
func (r *Request) MemberAllows(ctx context.Context, cluster string, attrs authorizationv1.ResourceAttributes) bool {
	c := r.checker
	if c.MemberReview == nil {
		return true
	}
	if r.user == nil {
		return false
	}
	key := strings.Join([]string{r.userKey, cluster, attrs.Verb, attrs.Group, attrs.Resource, attrs.Subresource,
		attrs.Namespace, attrs.Name}, "\x00")
	if v, ok := c.answers.Get(key); ok {
		return v.(bool)
	}

	r.mu.Lock()
	if p, ok := r.asked[key]; ok {
		r.mu.Unlock()
		select {
		case <-p.done:
			return p.allowed
		case <-ctx.Done():
			return false
		}
	}
	if len(r.asked) >= c.MaxReviews {
		first := !r.truncated
		r.truncated = true
		r.mu.Unlock()
		if first {
			klog.FromContext(ctx).V(2).Info("Member access reviews of the request used up", "user", r.user.GetName(), "max", c.MaxReviews)
			warning.AddWarning(ctx, "", fmt.Sprintf("only %d access reviews are sent to member clusters per request, "+
				"so what could not be checked is left out of this answer; narrow the request (one namespace, one cluster) "+
				"or retry: the answers are remembered for %s", c.MaxReviews, c.TTL))
		}
		return false
	}
	p := &pending{done: make(chan struct{})}
	r.asked[key] = p
	r.mu.Unlock()
	defer close(p.done)

	extra := make(map[string]authorizationv1.ExtraValue, len(r.user.GetExtra()))
	for k, v := range r.user.GetExtra() {
		extra[k] = v
	}
	ra := attrs
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: r.user.GetName(), UID: r.user.GetUID(), Groups: r.user.GetGroups(), Extra: extra, ResourceAttributes: &ra,
	}}
	allowed, err := c.MemberReview(ctx, cluster, sar)
	if err != nil {
		// Not remembered: the next request asks again.
		klog.FromContext(ctx).V(2).Info("Member access review failed", "cluster", cluster, "user", r.user.GetName(), "err", err)
		return false
	}
	p.allowed = allowed
	c.answers.Add(key, allowed, c.TTL)
	return allowed
}

// Truncated says whether some member checks of the request were answered
// no because its reviews were used up.
func (r *Request) Truncated() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.truncated
}

// userKey identifies everything of u a member's authorizer may look at.
func userKey(u user.Info) string {
	if u == nil {
		return ""
	}
	groups := slices.Clone(u.GetGroups())
	slices.Sort(groups)
	// fmt prints maps sorted by key.
	return strings.Join([]string{u.GetName(), u.GetUID(), strings.Join(groups, ","), fmt.Sprint(u.GetExtra())}, "\x00")
}
