package proxying

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	searchcache "github.com/flotilla-io/flotilla/search/cache"
	"github.com/flotilla-io/flotilla/search/storage"
)

func TestKubernetesPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/pods": "/api/v1/pods",
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy":             "/",
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/":            "/",
	} {
		if got := KubernetesPath(in, "/proxying/karmada/proxy"); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

func TestForClusterRewritesJSONAndProtobuf(t *testing.T) {
	t.Parallel()
	multi := storage.MultiRV{"member1": "10", "member2": "20"}.String()
	in := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: multi, Annotations: map[string]string{"resource.karmada.io/cached-from-cluster": "member2", "keep": "me"}}}
	raw, _ := json.Marshal(in)
	out, err := forCluster(raw, "application/json", "member2")
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.ConfigMap
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != "20" || len(got.Annotations) != 1 || got.Annotations["keep"] != "me" {
		t.Errorf("JSON rewritten to rv %q annotations %v", got.ResourceVersion, got.Annotations)
	}
	var pb bytes.Buffer
	if err := protobuf.Encode(in, &pb); err != nil {
		t.Fatal(err)
	}
	out, err = forCluster(pb.Bytes(), "application/vnd.kubernetes.protobuf", "member1")
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := protobuf.Decode(out, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cm := obj.(*corev1.ConfigMap); cm.ResourceVersion != "10" || cm.Annotations["resource.karmada.io/cached-from-cluster"] != "" {
		t.Errorf("protobuf rewritten to rv %q annotations %v", cm.ResourceVersion, cm.Annotations)
	}
	if _, err := forCluster(raw, "application/json", "member3"); err == nil {
		t.Error("a resourceVersion naming no version of the cluster was accepted")
	}
}

type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

type responder struct{ err error }

func (r *responder) Object(int, runtime.Object) {}
func (r *responder) Error(err error)            { r.err = err }

func TestRouting(t *testing.T) {
	t.Parallel()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	store := func(cluster string) *searchcache.Store {
		s, err := searchcache.NewStaticStore(cluster, gvr, "Pod", true, 5, []*unstructured.Unstructured{
			{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"namespace": "a", "name": "p-" + cluster, "resourceVersion": "5"}}},
			{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"namespace": "a", "name": "both", "resourceVersion": "5"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	stores := []*searchcache.Store{store("member1"), store("member2")}
	access := &storage.Access{Host: allowAll{}}
	for _, tc := range []struct {
		method, path string
		want         string // "cache", "cluster:<name>", "host" or an HTTP code
	}{
		{http.MethodGet, "/api/v1/pods", "cache"},
		{http.MethodGet, "/api/v1/namespaces/a/pods/p-member1", "cache"},
		{http.MethodGet, "/api/v1/namespaces/a/pods/p-member2/log", "cluster:member2"},
		{http.MethodDelete, "/api/v1/namespaces/a/pods/p-member1", "cluster:member1"},
		{http.MethodPatch, "/api/v1/namespaces/a/pods/both", "409"},
		{http.MethodDelete, "/api/v1/namespaces/a/pods/none", "404"},
		{http.MethodPost, "/api/v1/namespaces/a/pods", "405"},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps", "host"},
		{http.MethodGet, "/version", "host"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			var got string
			c := &Connecter{
				Stores: func(g schema.GroupVersionResource) ([]*searchcache.Store, <-chan struct{}) {
					if g == gvr {
						return stores, nil
					}
					return nil, nil
				},
				Access: access,
				Reader: &storage.Reader{Access: access, Stores: func(schema.GroupVersionResource) ([]*searchcache.Store, <-chan struct{}) {
					got = "cache"
					return stores, nil
				}},
				Cluster: func(_ context.Context, cluster, _ string, _ rest.Responder) (http.Handler, error) {
					return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got = "cluster:" + cluster }), nil
				},
				Host: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got = "host" }),
			}
			r := &responder{}
			req := httptest.NewRequest(tc.method, "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"+tc.path, io.NopCloser(bytes.NewReader(nil)))
			ctx := request.WithUser(req.Context(), &user.DefaultInfo{Name: "admin"})
			h, err := c.Connect(ctx, "karmada", nil, r)
			if err != nil {
				t.Fatal(err)
			}
			h.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
			if r.err != nil {
				got = errCode(r.err)
			}
			if got != tc.want {
				t.Errorf("went to %q (err %v), want %q", got, r.err, tc.want)
			}
		})
	}
}

func errCode(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok {
		return fmt.Sprint(s.Status().Code)
	}
	return err.Error()
}
