package access

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/warning"
)

var tom = &user.DefaultInfo{Name: "tom", UID: "u-1", Groups: []string{"devs", "system:authenticated"},
	Extra: map[string][]string{"scopes": {"read"}}}

// hostAllows allows clusters/proxy of the clusters named, and checks the
// attributes are exactly those of clusters/{name}/proxy.
type hostAllows []string

func (h hostAllows) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetVerb() != "get" || a.GetAPIGroup() != "cluster.karmada.io" || a.GetResource() != "clusters" ||
		a.GetSubresource() != "proxy" || !a.IsResourceRequest() || a.GetUser().GetName() != tom.Name {
		return authorizer.DecisionDeny, "", nil
	}
	for _, c := range h {
		if c == a.GetName() {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionDeny, "", nil
}

// reviews counts and records the reviews a fake member answers.
type reviews struct {
	mu    sync.Mutex
	sent  []*authorizationv1.SubjectAccessReview
	count atomic.Int32
	allow func(cluster string, ra *authorizationv1.ResourceAttributes) (bool, error)
}

func (r *reviews) review(_ context.Context, cluster string, sar *authorizationv1.SubjectAccessReview) (bool, error) {
	r.count.Add(1)
	r.mu.Lock()
	r.sent = append(r.sent, sar)
	r.mu.Unlock()
	return r.allow(cluster, sar.Spec.ResourceAttributes)
}

type recorder struct {
	mu       sync.Mutex
	warnings []string
}

func (r *recorder) AddWarning(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, text)
}

func podsIn(ns string) authorizationv1.ResourceAttributes {
	return authorizationv1.ResourceAttributes{Verb: "list", Group: "metrics.k8s.io", Resource: "pods", Namespace: ns}
}

func TestAllows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		host    hostAllows
		member  func(string, *authorizationv1.ResourceAttributes) (bool, error)
		noCheck bool
		cluster string
		want    bool
	}{
		{name: "both allow", host: hostAllows{"m1"}, cluster: "m1", want: true,
			member: func(c string, ra *authorizationv1.ResourceAttributes) (bool, error) {
				return c == "m1" && ra.Namespace == "a", nil
			}},
		{name: "host denies the cluster", host: hostAllows{"m2"}, cluster: "m1",
			member: func(string, *authorizationv1.ResourceAttributes) (bool, error) { return true, nil }},
		{name: "member denies", host: hostAllows{"m1"}, cluster: "m1",
			member: func(string, *authorizationv1.ResourceAttributes) (bool, error) { return false, nil }},
		{name: "member review fails", host: hostAllows{"m1"}, cluster: "m1",
			member: func(string, *authorizationv1.ResourceAttributes) (bool, error) {
				return true, errors.New("unreachable")
			}},
		{name: "member check off: the host decides", host: hostAllows{"m1"}, cluster: "m1", noCheck: true, want: true},
		{name: "member check off, host denies", host: hostAllows{}, cluster: "m1", noCheck: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rv := &reviews{allow: tc.member}
			c := &Checker{Host: tc.host}
			if !tc.noCheck {
				c.MemberReview = rv.review
			}
			if got := c.Request(tom).Allows(context.Background(), tc.cluster, podsIn("a")); got != tc.want {
				t.Errorf("Allows = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestMemberReviewCarriesTheUser(t *testing.T) {
	t.Parallel()
	rv := &reviews{allow: func(string, *authorizationv1.ResourceAttributes) (bool, error) { return true, nil }}
	c := &Checker{Host: hostAllows{"m1"}, MemberReview: rv.review}
	attrs := authorizationv1.ResourceAttributes{Verb: "get", Group: "custom.metrics.k8s.io", Resource: "pods", Subresource: "qps", Namespace: "a", Name: "p"}
	if !c.Request(tom).MemberAllows(context.Background(), "m1", attrs) {
		t.Fatal("not allowed")
	}
	sar := rv.sent[0].Spec
	if sar.User != "tom" || sar.UID != "u-1" || strings.Join(sar.Groups, ",") != "devs,system:authenticated" ||
		fmt.Sprint(sar.Extra["scopes"]) != "[read]" || *sar.ResourceAttributes != attrs {
		t.Errorf("review spec %+v", sar)
	}
}

func TestAnswersAreRemembered(t *testing.T) {
	t.Parallel()
	rv := &reviews{allow: func(string, *authorizationv1.ResourceAttributes) (bool, error) { return true, nil }}
	c := &Checker{Host: hostAllows{"m1"}, MemberReview: rv.review}
	ctx := context.Background()
	for range 3 {
		c.Request(tom).MemberAllows(ctx, "m1", podsIn("a"))
	}
	if n := rv.count.Load(); n != 1 {
		t.Errorf("%d reviews for one question, want 1", n)
	}
	other := &user.DefaultInfo{Name: "tom", UID: "u-1", Groups: []string{"admins"}}
	c.Request(other).MemberAllows(ctx, "m1", podsIn("a"))
	if n := rv.count.Load(); n != 2 {
		t.Errorf("same name, other groups: %d reviews, want 2 (answers are per identity)", n)
	}
}

func TestReviewsPerRequestAreBounded(t *testing.T) {
	t.Parallel()
	rv := &reviews{allow: func(string, *authorizationv1.ResourceAttributes) (bool, error) { return true, nil }}
	c := &Checker{Host: hostAllows{"m1"}, MemberReview: rv.review}
	rec := &recorder{}
	ctx := warning.WithWarningRecorder(context.Background(), rec)
	namespaces := make([]string, MaxMemberReviewsPerRequest+8)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("ns%02d", i)
	}

	check := func() (allowed int, req *Request) {
		req = c.Request(tom)
		var n atomic.Int32
		var wg sync.WaitGroup
		for _, ns := range namespaces {
			wg.Go(func() {
				if req.MemberAllows(ctx, "m1", podsIn(ns)) {
					n.Add(1)
				}
				// The same question again within the request: no new review.
				req.MemberAllows(ctx, "m1", podsIn(ns))
			})
		}
		wg.Wait()
		return int(n.Load()), req
	}

	allowed, req := check()
	if got := int(rv.count.Load()); got != MaxMemberReviewsPerRequest {
		t.Errorf("%d reviews sent, want %d", got, MaxMemberReviewsPerRequest)
	}
	if allowed != MaxMemberReviewsPerRequest || !req.Truncated() {
		t.Errorf("%d namespaces allowed (truncated %t), want %d and truncated", allowed, req.Truncated(), MaxMemberReviewsPerRequest)
	}
	if len(rec.warnings) != 1 || !strings.Contains(rec.warnings[0], "only 32 access reviews") {
		t.Errorf("warnings %q, want one about the bound", rec.warnings)
	}

	// Remembered answers are free: the next request checks the rest.
	allowed, req = check()
	if got := int(rv.count.Load()); got != len(namespaces) {
		t.Errorf("%d reviews after two requests, want %d", got, len(namespaces))
	}
	if allowed != len(namespaces) || req.Truncated() {
		t.Errorf("second request: %d allowed (truncated %t), want all", allowed, req.Truncated())
	}
}
