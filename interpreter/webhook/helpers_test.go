package webhook

import (
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	configlisters "github.com/flotilla-io/flotilla/apis/generated/listers/config/v1alpha1"
)

// answerFunc is what a fake webhook answers to a request.
type answerFunc func(req *configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse

// fakeWebhook is an interpreter webhook served over TLS that records what it
// is sent.
type fakeWebhook struct {
	srv *httptest.Server

	mu       sync.Mutex
	received []configv1alpha1.ResourceInterpreterContext
	paths    []string
}

// newFakeWebhook starts a webhook answering with answer; it stops when the
// test ends.
func newFakeWebhook(t *testing.T, answer answerFunc) *fakeWebhook {
	t.Helper()
	return newFakeWebhookWithCert(t, nil, answer)
}

// newFakeWebhookWithCert is newFakeWebhook serving cert, or httptest's
// certificate when cert is nil.
func newFakeWebhookWithCert(t *testing.T, cert *tls.Certificate, answer answerFunc) *fakeWebhook {
	t.Helper()
	fw := &fakeWebhook{}
	fw.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in configv1alpha1.ResourceInterpreterContext
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad request body", http.StatusBadRequest)
			return
		}
		fw.mu.Lock()
		fw.received = append(fw.received, in)
		fw.paths = append(fw.paths, r.URL.Path)
		fw.mu.Unlock()
		writeJSON(w, &configv1alpha1.ResourceInterpreterContext{
			TypeMeta: metav1.TypeMeta{APIVersion: "config.karmada.io/v1alpha1", Kind: "ResourceInterpreterContext"},
			Response: answer(in.Request),
		})
	}))
	if cert != nil {
		fw.srv.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
	}
	fw.srv.StartTLS()
	t.Cleanup(fw.srv.Close)
	return fw
}

// newRawWebhook starts a TLS server with any handler, for malformed answers.
func newRawWebhook(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// calls returns what the webhook was sent so far.
func (fw *fakeWebhook) calls() []configv1alpha1.ResourceInterpreterContext {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return append([]configv1alpha1.ResourceInterpreterContext(nil), fw.received...)
}

// lastRequest returns the last request the webhook was sent.
func (fw *fakeWebhook) lastRequest(t *testing.T) *configv1alpha1.ResourceInterpreterRequest {
	t.Helper()
	c := fw.calls()
	if len(c) == 0 {
		t.Fatal("webhook was not called")
	}
	return c[len(c)-1].Request
}

// caBundleOf returns the PEM certificate of a test server.
func caBundleOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// succeed returns a successful response to req, which fill completes.
func succeed(fill func(*configv1alpha1.ResourceInterpreterResponse)) answerFunc {
	return func(req *configv1alpha1.ResourceInterpreterRequest) *configv1alpha1.ResourceInterpreterResponse {
		resp := &configv1alpha1.ResourceInterpreterResponse{UID: req.UID, Successful: true}
		if fill != nil {
			fill(resp)
		}
		return resp
	}
}

// urlWebhook is a webhook reached at srv's URL plus path, trusting its
// certificate, with the given rules.
func urlWebhook(name string, srv *httptest.Server, rules ...configv1alpha1.RuleWithOperations) configv1alpha1.ResourceInterpreterWebhook {
	u := srv.URL + "/interpret"
	return configv1alpha1.ResourceInterpreterWebhook{
		Name:                       name,
		ClientConfig:               admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caBundleOf(srv)},
		Rules:                      rules,
		InterpreterContextVersions: []string{"v1alpha1"},
	}
}

// rule builds a rule; the lists are operations, groups, versions and kinds.
func rule(ops []configv1alpha1.InterpreterOperation, groups, versions, kinds []string) configv1alpha1.RuleWithOperations {
	return configv1alpha1.RuleWithOperations{
		Operations: ops,
		Rule:       configv1alpha1.Rule{APIGroups: groups, APIVersions: versions, Kinds: kinds},
	}
}

// allOnDeployments matches every operation on apps/v1 Deployments.
var allOnDeployments = rule(ops("*"), []string{"apps"}, []string{"v1"}, []string{"Deployment"})

func ops(names ...string) []configv1alpha1.InterpreterOperation {
	out := make([]configv1alpha1.InterpreterOperation, len(names))
	for i, n := range names {
		out[i] = configv1alpha1.InterpreterOperation(n)
	}
	return out
}

// webhookConfig builds a configuration holding hooks.
func webhookConfig(name string, hooks ...configv1alpha1.ResourceInterpreterWebhook) *configv1alpha1.ResourceInterpreterWebhookConfiguration {
	return &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks:   hooks,
	}
}

// newTestInterpreter returns an interpreter whose lister holds configs.
func newTestInterpreter(t *testing.T, opts Options, configs ...*configv1alpha1.ResourceInterpreterWebhookConfiguration) *Interpreter {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, c := range configs {
		if err := idx.Add(c); err != nil {
			t.Fatalf("adding %s: %v", c.Name, err)
		}
	}
	return New(configlisters.NewResourceInterpreterWebhookConfigurationLister(idx), opts)
}

// obj parses a YAML manifest.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return u
}

const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        image: nginx
`

func deployment(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return obj(t, deploymentYAML)
}

// toJSON encodes v, failing the test on error.
func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}
