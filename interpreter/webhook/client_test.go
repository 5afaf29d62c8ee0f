package webhook

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	configlisters "github.com/flotilla-io/flotilla/apis/generated/listers/config/v1alpha1"
)

// fakeResolver resolves every service to one URL and records what it was
// asked.
type fakeResolver struct {
	url *url.URL

	mu    sync.Mutex
	asked []string
}

// ResolveEndpoint implements ServiceResolver.
func (r *fakeResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, fmt.Sprintf("%s/%s:%d", namespace, name, port))
	return r.url, nil
}

func TestDefaultServiceResolver(t *testing.T) {
	t.Parallel()
	u, err := NewDefaultServiceResolver().ResolveEndpoint("karmada-system", "interpreter", 8443)
	if err != nil {
		t.Fatalf("ResolveEndpoint: %v", err)
	}
	if got, want := u.String(), "https://interpreter.karmada-system.svc:8443"; got != want {
		t.Errorf("ResolveEndpoint = %s, want %s", got, want)
	}
	if _, err := NewDefaultServiceResolver().ResolveEndpoint("", "interpreter", 443); err == nil {
		t.Error("ResolveEndpoint without namespace: no error")
	}
}

// TestServiceEndpoint checks a webhook reached through a Service: the
// resolver gives the address, the path is the service's, and the server
// certificate is verified against the service's DNS name, not the address.
func TestServiceEndpoint(t *testing.T) {
	t.Parallel()
	cert, caBundle := selfSignedCert(t, "interpreter.karmada-system.svc")
	fw := newFakeWebhookWithCert(t, &cert, succeed(func(r *configv1alpha1.ResourceInterpreterResponse) {
		r.Replicas = ptr.To[int32](4)
	}))
	addr, err := url.Parse(fw.srv.URL) // https://127.0.0.1:<port>, not in the certificate
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		port      *int32
		path      *string
		wantAsked string
		wantPath  string
	}{
		{"port and path", ptr.To[int32](8443), ptr.To("/interpret/workloads"), "karmada-system/interpreter:8443", "/interpret/workloads"},
		{"defaults", nil, nil, "karmada-system/interpreter:443", "/"},
	}
	// Not parallel: the cases share fw and read the path of its last call.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resolver := &fakeResolver{url: addr}
			hook := configv1alpha1.ResourceInterpreterWebhook{
				Name: "interpreter.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{
					Service: &admissionregistrationv1.ServiceReference{
						Namespace: "karmada-system", Name: "interpreter", Path: tc.path, Port: tc.port,
					},
					CABundle: caBundle,
				},
				Rules:                      []configv1alpha1.RuleWithOperations{allOnDeployments},
				InterpreterContextVersions: []string{"v1beta1", "v1alpha1"},
			}
			i := newTestInterpreter(t, Options{ServiceResolver: resolver}, webhookConfig("config", hook))

			n, _, err := i.GetReplicas(deployment(t))
			if err != nil {
				t.Fatalf("GetReplicas: %v", err)
			}
			if n != 4 {
				t.Errorf("GetReplicas = %d, want 4", n)
			}
			if len(resolver.asked) != 1 || resolver.asked[0] != tc.wantAsked {
				t.Errorf("resolver asked %q, want [%q]", resolver.asked, tc.wantAsked)
			}
			fw.mu.Lock()
			gotPath := fw.paths[len(fw.paths)-1]
			fw.mu.Unlock()
			if gotPath != tc.wantPath {
				t.Errorf("request path = %q, want %q", gotPath, tc.wantPath)
			}
			if addr.Path != "" {
				t.Errorf("the resolver's URL was changed to %s", addr)
			}
		})
	}
}

// TestClientCache checks that a webhook's HTTP client is built once and
// rebuilt only when its caBundle changes.
func TestClientCache(t *testing.T) {
	t.Parallel()
	fw := newFakeWebhook(t, succeed(nil))
	hook := urlWebhook("hook.example.com", fw.srv, allOnDeployments)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := idx.Add(webhookConfig("config", hook)); err != nil {
		t.Fatal(err)
	}
	i := New(configlisters.NewResourceInterpreterWebhookConfigurationLister(idx), Options{})
	client := func() *http.Client {
		t.Helper()
		i.clients.mu.Lock()
		defer i.clients.mu.Unlock()
		if n := len(i.clients.clients); n != 1 {
			t.Fatalf("cache holds %d clients, want 1", n)
		}
		return i.clients.clients[clientKey{config: "config", webhook: "hook.example.com"}].client
	}
	call := func() {
		t.Helper()
		if _, _, err := i.GetReplicas(deployment(t)); err != nil {
			t.Fatalf("GetReplicas: %v", err)
		}
	}

	call()
	first := client()
	call()
	if client() != first {
		t.Error("client rebuilt for an unchanged webhook")
	}

	// The same CA, encoded differently (a trailing comment line), is another
	// caBundle as far as the cache knows.
	hook.ClientConfig.CABundle = append(append([]byte(nil), hook.ClientConfig.CABundle...), []byte("# rotated\n")...)
	if err := idx.Update(webhookConfig("config", hook)); err != nil {
		t.Fatal(err)
	}
	i.Invalidate() // as the informer's handlers do
	call()
	if client() == first {
		t.Error("client not rebuilt after the caBundle changed")
	}
}

// TestConcurrentCalls runs calls in parallel, for the race detector.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	fw := newFakeWebhook(t, succeed(func(r *configv1alpha1.ResourceInterpreterResponse) { r.Replicas = ptr.To[int32](2) }))
	i := newTestInterpreter(t, Options{}, webhookConfig("config", urlWebhook("hook.example.com", fw.srv, allOnDeployments)))
	d := deployment(t) // shared: operations only read their arguments
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			if _, _, err := i.GetReplicas(d); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
