package storage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	searchcache "github.com/flotilla-io/flotilla/search/cache"
)

func TestMultiRVEncodingIsKarmadas(t *testing.T) {
	t.Parallel()
	m := MultiRV{"member2": "20", "member1": "10"}
	want := base64.RawURLEncoding.EncodeToString([]byte(`{"member1":"10","member2":"20"}`))
	if got := m.String(); got != want {
		t.Errorf("encoded %q, want %q", got, want)
	}
	back, err := ParseMultiRV(want)
	if err != nil || !cmp.Equal(back, m) {
		t.Errorf("decoded %v %v", back, err)
	}
	if got := (MultiRV{}).String(); got != "" {
		t.Errorf("empty map encodes to %q", got)
	}
	if any, err := ParseMultiRV("0"); err != nil || any.Get("member9") != "0" {
		t.Errorf(`"0" means any in every cluster: %v %v`, any, err)
	}
	if got := MultiRV(nil).String(); got != "0" {
		t.Errorf(`the "any" resourceVersion encodes to %q, want "0"`, got)
	}
	odd := MultiRV{`a"b\c`: "1"}
	if back, err := ParseMultiRV(odd.String()); err != nil || !cmp.Equal(back, odd) {
		t.Errorf("a cluster name with JSON's special characters decoded as %v %v", back, err)
	}
	for _, bad := range []string{"!!", base64.RawURLEncoding.EncodeToString([]byte(`[1]`)), base64.RawURLEncoding.EncodeToString([]byte(`{"m":"x"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`null`))} {
		if _, err := ParseMultiRV(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func pod(ns, name, rv string, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": rv, "labels": labels}}}
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// allow is an authorizer allowing the clusters named.
type allow []string

func (a allow) Authorize(_ context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	if slices.Contains(a, attr.GetName()) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionDeny, "", nil
}

func newReader(t *testing.T, clusters allow, member func(cluster string, ra *authorizationv1.ResourceAttributes) bool) *Reader {
	t.Helper()
	s1, err := searchcache.NewStaticStore("member1", podsGVR, "Pod", true, 100, []*unstructured.Unstructured{
		pod("a", "p1", "11", map[string]any{"app": "web"}), pod("a", "p2", "12", nil), pod("b", "p3", "13", map[string]any{"app": "web"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := searchcache.NewStaticStore("member2", podsGVR, "Pod", true, 200, []*unstructured.Unstructured{
		pod("a", "p1", "21", nil), pod("b", "q1", "22", map[string]any{"app": "web"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	access := &Access{Host: clusters}
	if member != nil {
		access.MemberReview = func(_ context.Context, cluster string, sar *authorizationv1.SubjectAccessReview) (bool, error) {
			return member(cluster, sar.Spec.ResourceAttributes), nil
		}
	}
	return &Reader{Access: access, Stores: func(gvr schema.GroupVersionResource) ([]*searchcache.Store, <-chan struct{}) {
		if gvr != podsGVR {
			return nil, nil
		}
		return []*searchcache.Store{s1, s2}, make(chan struct{})
	}}
}

type listed struct {
	Kind     string
	Metadata struct{ ResourceVersion, Continue string }
	Items    []struct {
		Metadata struct {
			Namespace, Name, ResourceVersion string
			Annotations                      map[string]string
		}
	}
	Code    int
	Message string
}

func (l listed) names() []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Metadata.Annotations["resource.karmada.io/cached-from-cluster"]+"/"+it.Metadata.Namespace+"/"+it.Metadata.Name)
	}
	return out
}

func serve(t *testing.T, r *Reader, verb, ns, name string, q url.Values) (int, listed) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/x?"+q.Encode(), nil)
	req.Header.Set("Accept", "application/json")
	r.Serve(rec, req, Request{User: &user.DefaultInfo{Name: "tom"}, Resource: podsGVR, Namespace: ns, Name: name, Verb: verb, Query: q})
	var l listed
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
		t.Fatalf("%s: %v", rec.Body.String(), err)
	}
	return rec.Code, l
}

func TestList(t *testing.T) {
	t.Parallel()
	all := allow{"member1", "member2"}
	for _, tc := range []struct {
		name     string
		clusters allow
		member   func(string, *authorizationv1.ResourceAttributes) bool
		ns       string
		query    url.Values
		want     []string
		code     int
	}{
		{name: "everything, clusters then keys in order", clusters: all, want: []string{"member1/a/p1", "member1/a/p2", "member1/b/p3", "member2/a/p1", "member2/b/q1"}},
		{name: "one namespace", clusters: all, ns: "b", want: []string{"member1/b/p3", "member2/b/q1"}},
		{name: "label selector", clusters: all, query: url.Values{"labelSelector": {"app=web"}}, want: []string{"member1/a/p1", "member1/b/p3", "member2/b/q1"}},
		{name: "field selector", clusters: all, query: url.Values{"fieldSelector": {"metadata.name=p1"}}, want: []string{"member1/a/p1", "member2/a/p1"}},
		{name: "only the clusters the control plane allows", clusters: allow{"member2"}, want: []string{"member2/a/p1", "member2/b/q1"}},
		{name: "only the namespaces the member allows", clusters: all,
			member: func(c string, ra *authorizationv1.ResourceAttributes) bool {
				return c == "member1" && ra.Namespace == "b"
			},
			want: []string{"member1/b/p3"}},
		{name: "no right anywhere", clusters: allow{}, code: http.StatusForbidden},
		{name: "member refuses everywhere", clusters: all, member: func(string, *authorizationv1.ResourceAttributes) bool { return false }, code: http.StatusForbidden},
		{name: "unsupported field selector", clusters: all, query: url.Values{"fieldSelector": {"spec.nodeName=n"}}, code: http.StatusBadRequest},
		{name: "malformed resourceVersion", clusters: all, query: url.Values{"resourceVersion": {"zzz"}}, code: http.StatusBadRequest},
		{name: "malformed continue", clusters: all, query: url.Values{"continue": {"zzz"}, "limit": {"1"}}, code: http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, l := serve(t, newReader(t, tc.clusters, tc.member), "list", tc.ns, "", tc.query)
			if tc.code != 0 {
				if code != tc.code {
					t.Errorf("code %d (%s), want %d", code, l.Message, tc.code)
				}
				return
			}
			if code != http.StatusOK {
				t.Fatalf("code %d: %s", code, l.Message)
			}
			if diff := cmp.Diff(tc.want, l.names()); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPaginationSpansClusters(t *testing.T) {
	t.Parallel()
	r := newReader(t, allow{"member1", "member2"}, nil)
	var got []string
	cont := ""
	for range 10 {
		code, l := serve(t, r, "list", "", "", url.Values{"limit": {"2"}, "continue": {cont}})
		if code != http.StatusOK || len(l.Items) > 2 {
			t.Fatalf("code %d, %d items: %s", code, len(l.Items), l.Message)
		}
		got = append(got, l.names()...)
		if rv, _ := ParseMultiRV(l.Metadata.ResourceVersion); rv["member1"] != "100" || rv["member2"] != "200" {
			t.Errorf("page resourceVersion %v, want both stores'", rv)
		}
		if cont = l.Metadata.Continue; cont == "" {
			break
		}
	}
	want := []string{"member1/a/p1", "member1/a/p2", "member1/b/p3", "member2/a/p1", "member2/b/q1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	r := newReader(t, allow{"member1", "member2"}, nil)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.Serve(rec, req, Request{User: &user.DefaultInfo{Name: "tom"}, Resource: podsGVR, Namespace: "b", Name: "q1", Verb: "get"})
	var obj struct {
		Metadata struct {
			ResourceVersion string
			Annotations     map[string]string
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &obj); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if rv, _ := ParseMultiRV(obj.Metadata.ResourceVersion); !cmp.Equal(rv, MultiRV{"member2": "22"}) || obj.Metadata.Annotations["resource.karmada.io/cached-from-cluster"] != "member2" {
		t.Errorf("got rv %v annotations %v", rv, obj.Metadata.Annotations)
	}
	for name, code := range map[string]int{"p1": http.StatusConflict, "nope": http.StatusNotFound} {
		code2, l := serve(t, r, "get", "a", name, nil)
		if code2 != code {
			t.Errorf("get a/%s: %d %s, want %d", name, code2, l.Message, code)
		}
	}
	_ = fmt.Sprint
}

// A resource no store caches: a list is an empty <Kind>List (Karmada's
// answer), a get or a watch is 404, and a resource no member serves is 404.
func TestUncachedResource(t *testing.T) {
	t.Parallel()
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	r := newReader(t, allow{"member1", "member2"}, nil)
	r.KindFor = func(gvr schema.GroupVersionResource) (string, bool) {
		if gvr == deployments {
			return "Deployment", true
		}
		return "", false
	}
	do := func(gvr schema.GroupVersionResource, verb, name string, q url.Values) (int, string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/x?"+q.Encode(), nil)
		req.Header.Set("Accept", "application/json")
		r.Serve(rec, req, Request{User: &user.DefaultInfo{Name: "tom"}, Resource: gvr, Name: name, Verb: verb, Query: q})
		return rec.Code, rec.Body.String()
	}
	code, body := do(deployments, "list", "", nil)
	var l struct {
		Kind, APIVersion string
		Items            []json.RawMessage
	}
	if err := json.Unmarshal([]byte(body), &l); err != nil || code != http.StatusOK {
		t.Fatalf("list: %d %s %v", code, body, err)
	}
	if l.Kind != "DeploymentList" || l.APIVersion != "apps/v1" || l.Items == nil || len(l.Items) != 0 {
		t.Errorf("list: want an empty apps/v1 DeploymentList with items [], got %s", body)
	}
	for _, tc := range []struct {
		gvr        schema.GroupVersionResource
		verb, name string
		q          url.Values
	}{
		{gvr: deployments, verb: "get", name: "web"},
		{gvr: deployments, verb: "list", q: url.Values{"watch": {"true"}}},
		{gvr: schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "widgets"}, verb: "list"},
	} {
		if code, body := do(tc.gvr, tc.verb, tc.name, tc.q); code != http.StatusNotFound {
			t.Errorf("%s %s %v: code %d (%s), want 404", tc.verb, tc.gvr, tc.q, code, body)
		}
	}
	// Without a mapping the reader answers 404 as before.
	r.KindFor = nil
	if code, body := do(deployments, "list", "", nil); code != http.StatusNotFound {
		t.Errorf("list without KindFor: code %d (%s), want 404", code, body)
	}
}

// blockingWriter is a client that stops reading: its writes wait until
// released.
type blockingWriter struct {
	header  http.Header
	release chan struct{}
	// started is closed when the response starts: the watch's watchers
	// are registered with the stores by then.
	started chan struct{}
	mu      sync.Mutex
	body    bytes.Buffer
}

func (b *blockingWriter) Header() http.Header { return b.header }
func (b *blockingWriter) WriteHeader(int)     { close(b.started) }
func (b *blockingWriter) Flush()              {}
func (b *blockingWriter) Write(p []byte) (int, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.body.Write(p)
}

// TestWatchBehindEndsWith429: a watcher that falls more than the store's
// buffer behind is closed, and says so with a 429 ERROR event (client-go
// backs off and watches again from its last resourceVersion) instead of
// ending silently.
func TestWatchBehindEndsWith429(t *testing.T) {
	t.Parallel()
	r := newReader(t, allow{"member1", "member2"}, nil)
	stores, _ := r.Stores(podsGVR)
	w := &blockingWriter{header: http.Header{}, release: make(chan struct{}), started: make(chan struct{})}
	q := url.Values{"watch": {"true"}, "resourceVersion": {MultiRV{"member1": "100", "member2": "200"}.String()}}
	req := httptest.NewRequest(http.MethodGet, "/x?"+q.Encode(), nil)
	req.Header.Set("Accept", "application/json")
	served := make(chan struct{})
	go func() {
		defer close(served)
		r.Serve(w, req, Request{User: &user.DefaultInfo{Name: "tom"}, Resource: podsGVR, Namespace: "a", Verb: "list", Query: q})
	}()
	select {
	case <-w.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not start")
	}
	// More changes than the store buffers for a watcher, plus what the
	// handler holds, while the client reads nothing.
	for i := range searchcache.WatcherBuffer + 600 {
		if err := stores[0].ApplyStatic(watch.Modified, pod("a", "p1", fmt.Sprint(101+i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	close(w.release)
	select {
	case <-served:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not end when its watcher fell behind")
	}
	lines := strings.Split(strings.TrimSpace(w.body.String()), "\n")
	var last struct {
		Type   string
		Object metav1.Status
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Type != "ERROR" || last.Object.Code != http.StatusTooManyRequests || last.Object.Reason != metav1.StatusReasonTooManyRequests ||
		!strings.Contains(last.Object.Message, "fell more than 1024 changes behind in cluster member1") {
		t.Errorf("the watch ended with %s, want a 429 ERROR event saying it fell behind", lines[len(lines)-1])
	}
	if len(lines) > searchcache.WatcherBuffer+300 {
		t.Errorf("%d events written to a client that fell behind", len(lines))
	}
}
