package clusterproxy

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ host, want string }{
		{"https://cp:6443", "https://cp:6443/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"},
		{"https://cp:6443/", "https://cp:6443/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"},
	} {
		cp := &rest.Config{Host: tc.host, BearerToken: "tok"}
		got := Config(cp, "member1")
		if got.Host != tc.want || got.BearerToken != "tok" {
			t.Errorf("Config(%s) = host %s token %q, want %s and the same user", tc.host, got.Host, got.BearerToken, tc.want)
		}
		if cp.Host != tc.host {
			t.Errorf("Config changed its input: %s", cp.Host)
		}
	}
}

// TestGetterReachesTheMember: requests of a client built from the Getter,
// discovery and the mapper included, go to the member's proxy path with
// the control plane's credentials.
func TestGetterReachesTheMember(t *testing.T) {
	t.Parallel()
	const prefix = "/apis/cluster.karmada.io/v1alpha1/clusters/member2/proxy"
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no credentials", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case prefix + "/api":
			_ = json.NewEncoder(w).Encode(metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
		case prefix + "/apis":
			_ = json.NewEncoder(w).Encode(metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList"}})
		case prefix + "/api/v1":
			_ = json.NewEncoder(w).Encode(metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "v1",
				APIResources: []metav1.APIResource{{Name: "pods", Kind: "Pod", Namespaced: true, ShortNames: []string{"po"}, Verbs: []string{"get", "list"}}}})
		case prefix + "/api/v1/namespaces/default/pods":
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	g := NewGetter(fixedConfig{&rest.Config{Host: srv.URL, BearerToken: "tok"}}, "member2")

	mapper, err := g.ToRESTMapper()
	if err != nil {
		t.Fatal(err)
	}
	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: "po"})
	if err != nil || gvr.Resource != "pods" {
		t.Fatalf("po maps to %v (%v), want pods: the member's discovery", gvr, err)
	}
	cfg, err := g.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods of member2: %v (%v)", pods, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if len(p) < len(prefix) || p[:len(prefix)] != prefix {
			t.Errorf("request to %s: not through member2's proxy", p)
		}
	}
}

// fixedConfig is a control plane's RESTClientGetter: a fixed config, and
// neither discovery nor a mapper, which are never the member's.
type fixedConfig struct{ cfg *rest.Config }

func (c fixedConfig) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(c.cfg), nil }
func (c fixedConfig) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return nil, errors.New("the control plane's discovery is not the member's")
}
func (c fixedConfig) ToRESTMapper() (meta.RESTMapper, error) {
	return nil, errors.New("the control plane's mapper is not the member's")
}
func (c fixedConfig) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), nil)
}

var _ genericclioptions.RESTClientGetter = fixedConfig{}
