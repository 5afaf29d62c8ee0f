package webhook

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

func TestServiceLookupResolver(t *testing.T) {
	t.Parallel()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, svc := range []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "external"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cluster"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.7"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "headless"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}},
	} {
		if err := idx.Add(svc); err != nil {
			t.Fatal(err)
		}
	}
	r := NewServiceLookupResolver(corelisters.NewServiceLister(idx))
	for name, want := range map[string]string{
		"external": "https://localhost:8443",
		"cluster":  "https://10.0.0.7:8443",
		"headless": "https://headless.ns.svc:8443",
		"missing":  "https://missing.ns.svc:8443",
	} {
		u, err := r.ResolveEndpoint("ns", name, 8443)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if u.String() != want {
			t.Errorf("%s resolved to %s, want %s", name, u, want)
		}
	}
}
