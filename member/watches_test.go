package member

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics/testutil"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// Each watch a member client opens counts in flotilla_member_watches until
// it ends; lists and gets do not count.
func TestWatchesCounted(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-block:
			case <-r.Context().Done():
			}
			return
		}
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(block) })
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: names.SecretNamespace, Name: "w"}, Data: map[string][]byte{names.SecretTokenKey: []byte("t")}}
	cache := NewCache(func(string, string) (*corev1.Secret, error) { return secret, nil })
	cl, err := cache.Get(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "watched"}, Spec: clusterv1alpha1.ClusterSpec{
		APIEndpoint: srv.URL, SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: names.SecretNamespace, Name: "w"}}})
	if err != nil {
		t.Fatal(err)
	}
	value := func(resource string) float64 {
		v, err := testutil.GetGaugeMetricValue(watchesGauge.WithLabelValues("watched", resource))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cl.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := value("pods"); v != 0 {
		t.Fatalf("a list counted as %v watches", v)
	}
	w1, err := cl.Clientset.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w2, err := cl.Clientset.CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w3, err := cl.Dynamic.Resource(appsDeployments).Namespace("ns").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, d := value("pods"), value("deployments.apps"); p != 2 || d != 1 {
		t.Errorf("open watches: pods %v deployments.apps %v, want 2 and 1", p, d)
	}
	w1.Stop()
	w3.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for (value("pods") != 1 || value("deployments.apps") != 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p, d := value("pods"), value("deployments.apps"); p != 1 || d != 0 {
		t.Errorf("after stopping two: pods %v deployments.apps %v, want 1 and 0", p, d)
	}
	w2.Stop()
}

var appsDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
