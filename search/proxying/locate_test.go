package proxying

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	searchcache "github.com/flotilla-io/flotilla/search/cache"
	"github.com/flotilla-io/flotilla/search/storage"
)

// denyCluster is a control-plane authorizer denying clusters/proxy of one
// cluster.
type denyCluster string

func (d denyCluster) Authorize(_ context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	if attr.GetName() == string(d) {
		return authorizer.DecisionDeny, "", nil
	}
	return authorizer.DecisionAllow, "", nil
}

// TestWritesAnswerUniformly checks that a write through proxying tells
// nothing of objects in namespaces the caller may not read: an object
// there, in one cluster or in several, answers exactly as a name that
// exists nowhere.
func TestWritesAnswerUniformly(t *testing.T) {
	t.Parallel()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	pod := func(ns, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": "5"}}}
	}
	store := func(cluster string) *searchcache.Store {
		s, err := searchcache.NewStaticStore(cluster, gvr, "Pod", true, 5, []*unstructured.Unstructured{
			pod("open", "both"), pod("open", "only-"+cluster),
			pod("hidden", "both"), pod("hidden", "only-"+cluster),
			pod("half", "both"),
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	stores := []*searchcache.Store{store("member1"), store("member2")}
	// The members let "dev" read everything but namespace hidden, and
	// namespace half only in member1.
	memberReview := func(_ context.Context, cluster string, sar *authorizationv1.SubjectAccessReview) (bool, error) {
		ns := sar.Spec.ResourceAttributes.Namespace
		return ns != "hidden" && (ns != "half" || cluster != "member2"), nil
	}
	notFound := func(name string) string { return describe(apierrors.NewNotFound(gvr.GroupResource(), name)) }
	for _, tc := range []struct {
		name, method, path string
		host               authorizer.Authorizer
		// want is "cluster:<name>" or the whole error (describe).
		want string
	}{
		{"readable, one cluster", http.MethodDelete, "/api/v1/namespaces/open/pods/only-member1", allowAll{}, "cluster:member1"},
		{"readable, two clusters", http.MethodPatch, "/api/v1/namespaces/open/pods/both", allowAll{}, describe(storage.Ambiguous(gvr.GroupResource(), "both", []string{"member1", "member2"}))},
		{"missing", http.MethodDelete, "/api/v1/namespaces/hidden/pods/none", allowAll{}, notFound("none")},
		{"hidden, two clusters", http.MethodDelete, "/api/v1/namespaces/hidden/pods/both", allowAll{}, notFound("both")},
		{"hidden, one cluster", http.MethodPatch, "/api/v1/namespaces/hidden/pods/only-member2", allowAll{}, notFound("only-member2")},
		{"hidden update", http.MethodPut, "/api/v1/namespaces/hidden/pods/both", allowAll{}, notFound("both")},
		{"hidden subresource", http.MethodPost, "/api/v1/namespaces/hidden/pods/both/eviction", allowAll{}, notFound("both")},
		{"readable in one of two clusters", http.MethodDelete, "/api/v1/namespaces/half/pods/both", allowAll{}, "cluster:member1"},
		{"cluster not reachable", http.MethodDelete, "/api/v1/namespaces/open/pods/only-member2", denyCluster("member2"), notFound("only-member2")},
		{"other cluster not reachable", http.MethodDelete, "/api/v1/namespaces/open/pods/both", denyCluster("member2"), "cluster:member1"},
		{"no namespace", http.MethodDelete, "/api/v1/pods/both", allowAll{}, notFound("both")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			access := &storage.Access{Host: tc.host, MemberReview: memberReview}
			var got string
			c := &Connecter{
				Stores: func(g schema.GroupVersionResource) ([]*searchcache.Store, <-chan struct{}) {
					if g == gvr {
						return stores, nil
					}
					return nil, nil
				},
				Access: access,
				Reader: &storage.Reader{Access: access, Stores: func(schema.GroupVersionResource) ([]*searchcache.Store, <-chan struct{}) { return stores, nil }},
				Cluster: func(_ context.Context, cluster, _ string, _ rest.Responder) (http.Handler, error) {
					return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got = "cluster:" + cluster }), nil
				},
				Host: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got = "host" }),
			}
			r := &responder{}
			req := httptest.NewRequest(tc.method, "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"+tc.path, io.NopCloser(bytes.NewReader([]byte(`{}`))))
			ctx := request.WithUser(req.Context(), &user.DefaultInfo{Name: "dev"})
			h, err := c.Connect(ctx, "karmada", nil, r)
			if err != nil {
				t.Fatal(err)
			}
			h.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
			if r.err != nil {
				got = describe(r.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

// describe is all an API error tells the caller.
func describe(err error) string {
	s, ok := err.(apierrors.APIStatus)
	if !ok {
		return err.Error()
	}
	st := s.Status()
	return fmt.Sprintf("%d %s %q %+v", st.Code, st.Reason, st.Message, st.Details)
}
