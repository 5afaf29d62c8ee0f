package member

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

func TestProxyHeader(t *testing.T) {
	t.Parallel()
	got := ProxyHeader(map[string]string{"x-a": "1, 2,,3 ", "X-B": "only"})
	want := http.Header{"X-A": {"1", "2", "3"}, "X-B": {"only"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProxyHeader (-want +got):\n%s", diff)
	}
	if ProxyHeader(nil) != nil {
		t.Error("want nil for no headers")
	}
}

// Every member client (the scheduler's estimate, the metrics adapter,
// execution, status) goes through spec.proxyURL with spec.proxyHeader on
// its CONNECT, as the clusters/proxy handler does; a change of the headers
// builds a new client.
func TestClientHonoursProxyURLAndHeader(t *testing.T) {
	t.Parallel()
	apiserver := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
	}))
	t.Cleanup(apiserver.Close)
	proxy := newConnectProxy(t, false)

	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: apiserver.Certificate().Raw})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: names.SecretNamespace, Name: "m", ResourceVersion: "1"},
		Data: map[string][]byte{names.SecretTokenKey: []byte("t"), names.SecretCABundleKey: ca}}
	cache := NewCache(func(string, string) (*corev1.Secret, error) { return secret, nil })
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: clusterv1alpha1.ClusterSpec{
		SyncMode: clusterv1alpha1.Push, APIEndpoint: apiserver.URL, ProxyURL: proxy.url,
		ProxyHeader: map[string]string{"X-Proxy-Token": "a, b"},
		SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: names.SecretNamespace, Name: "m"}}}

	cl, err := cache.Get(cluster)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cl.Clientset.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	if v.GitVersion != "v1.36.3" {
		t.Errorf("version %q", v.GitVersion)
	}
	seen := proxy.recorded()
	if len(seen) == 0 {
		t.Fatal("the request did not go through spec.proxyURL")
	}
	if diff := cmp.Diff([]string{"a", "b"}, seen[0].header.Values("X-Proxy-Token")); diff != "" {
		t.Errorf("spec.proxyHeader on CONNECT (-want +got):\n%s", diff)
	}

	changed := cluster.DeepCopy()
	changed.Spec.ProxyHeader = map[string]string{"X-Proxy-Token": "c"}
	cl2, err := cache.Get(changed)
	if err != nil {
		t.Fatal(err)
	}
	if cl2 == cl || cl2.Key() == cl.Key() {
		t.Error("a new proxyHeader kept the old client")
	}
}
