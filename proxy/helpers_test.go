package proxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

const secretNamespace = "karmada-cluster"

// tom is a service account of the control plane with a bound token: a UID,
// groups (including one that must not be impersonated) and extras.
var tom = &user.DefaultInfo{
	Name:   "system:serviceaccount:default:tom",
	UID:    "9b6a1d1e-tom",
	Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", user.AllAuthenticated},
	Extra: map[string][]string{
		"authentication.kubernetes.io/credential-id": {"JTI=abc"},
		"example.com/Scopes":                         {"read", "write"},
	},
}

// recorded is what a member saw of one request.
type recorded struct {
	method, path, rawQuery, host string
	header                       http.Header
	body                         string
	remote                       string
}

// fakeMember is a fake member API server over TLS that records every request.
type fakeMember struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

// newMember starts a member serving h (a 200 JSON echo when nil).
func newMember(t *testing.T, http2 bool, h http.HandlerFunc) *fakeMember {
	t.Helper()
	m := &fakeMember{}
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"kind":"Echo","path":"`+r.URL.Path+`"}`)
		}
	}
	m.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.reqs = append(m.reqs, recorded{
			method: r.Method, path: r.URL.Path, rawQuery: r.URL.RawQuery, host: r.Host,
			header: r.Header.Clone(), body: string(body), remote: r.RemoteAddr,
		})
		m.mu.Unlock()
		h(w, r)
	}))
	m.EnableHTTP2 = http2
	m.Config.ErrorLog = log.New(io.Discard, "", 0) // failed handshakes are expected
	m.StartTLS()
	t.Cleanup(m.Close)
	return m
}

func (m *fakeMember) requests() []recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]recorded(nil), m.reqs...)
}

func (m *fakeMember) last(t *testing.T) recorded {
	t.Helper()
	reqs := m.requests()
	if len(reqs) == 0 {
		t.Fatal("member received no request")
	}
	return reqs[len(reqs)-1]
}

// caPEM returns the PEM CA bundle that verifies the member.
func (m *fakeMember) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: m.Certificate().Raw})
}

// otherCAPEM returns a self-signed CA that signed none of the members.
func otherCAPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(42),
		Subject:               pkix.Name{CommonName: "other-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// store is a fake source of Clusters and Secrets.
type store struct {
	mu         sync.Mutex
	clusters   map[string]*clusterv1alpha1.Cluster
	secrets    map[string]*corev1.Secret
	clusterErr error
}

func newStore() *store {
	return &store{clusters: map[string]*clusterv1alpha1.Cluster{}, secrets: map[string]*corev1.Secret{}}
}

func (s *store) getCluster(name string) (*clusterv1alpha1.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clusterErr != nil {
		return nil, s.clusterErr
	}
	c, ok := s.clusters[name]
	if !ok {
		return nil, apierrors.NewNotFound(clusterv1alpha1.Resource("clusters"), name)
	}
	return c, nil
}

func (s *store) listClusters() ([]*clusterv1alpha1.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*clusterv1alpha1.Cluster, 0, len(s.clusters))
	for _, c := range s.clusters {
		out = append(out, c)
	}
	return out, nil
}

func (s *store) getSecret(namespace, name string) (*corev1.Secret, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
	}
	return sec, nil
}

// updateCluster replaces a cluster with a modified copy, as an informer would.
func (s *store) updateCluster(name string, mutate func(*clusterv1alpha1.Cluster)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clusters[name].DeepCopy()
	mutate(c)
	s.clusters[name] = c
}

// updateSecret replaces a secret with a modified copy.
func (s *store) updateSecret(namespace, name string, mutate func(*corev1.Secret)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.secrets[namespace+"/"+name].DeepCopy()
	mutate(sec)
	s.secrets[namespace+"/"+name] = sec
}

func (s *store) deleteSecret(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.secrets, namespace+"/"+name)
}

// addCluster registers a Ready cluster pointing at m, with a secretRef
// holding m's CA and an impersonator secret holding "imp-<name>". mutate may
// change the cluster before it is stored.
func (s *store) addCluster(name string, m *fakeMember, mutate func(*clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1", Generation: 1},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:              clusterv1alpha1.Push,
			SecretRef:             &clusterv1alpha1.LocalSecretReference{Namespace: secretNamespace, Name: name},
			ImpersonatorSecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: secretNamespace, Name: name + "-impersonator"},
		},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{
			Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady",
		}}},
	}
	var ca []byte
	if m != nil {
		c.Spec.APIEndpoint = m.URL
		ca = m.caPEM()
	}
	if mutate != nil {
		mutate(c)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clusters[name] = c
	s.secrets[secretNamespace+"/"+name] = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: name, ResourceVersion: "1"},
		Data:       map[string][]byte{"caBundle": ca, "token": []byte("control-plane-token")},
	}
	s.secrets[secretNamespace+"/"+name+"-impersonator"] = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: name + "-impersonator", ResourceVersion: "1"},
		Data:       map[string][]byte{"token": []byte("imp-" + name)},
	}
	return c
}

// connecter returns a Connecter over the store, with a member cache of its own.
func (s *store) connecter(opts ...Option) *Connecter {
	return NewConnecter(s.getCluster, member.NewCache(s.getSecret), s.listClusters, opts...)
}

// responder is the rest.Responder the API server would pass: errors become
// Status objects with their code.
type responder struct{ w http.ResponseWriter }

func (r *responder) Object(code int, obj runtime.Object) {
	r.w.Header().Set("Content-Type", "application/json")
	r.w.WriteHeader(code)
	_ = json.NewEncoder(r.w).Encode(obj)
}

func (r *responder) Error(err error) {
	var status metav1.Status
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		status = apiStatus.Status()
	} else {
		status = apierrors.NewInternalError(err).Status()
	}
	r.w.Header().Set("Content-Type", "application/json")
	r.w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(r.w).Encode(&status)
}

// front plays the API server in front of the Connecter: it serves
// /clusters/{name}/proxy/{path} as the requesting user u (none when nil).
func front(c *Connecter, u user.Info) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, sub, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/clusters/"), "/")
		ctx := r.Context()
		if u != nil {
			ctx = request.WithUser(ctx, u)
		}
		r = r.WithContext(ctx)
		resp := &responder{w: w}
		// Like the API server, the subpath keeps its leading slash.
		h, err := c.Connect(ctx, name, &clusterv1alpha1.ClusterProxyOptions{Path: strings.TrimPrefix(sub, "proxy")}, resp)
		if err != nil {
			resp.Error(err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// do sends one request through front and returns the recorded response.
func do(c *Connecter, u user.Info, method, target string, header http.Header, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, vv := range header {
		req.Header[k] = vv
	}
	rec := httptest.NewRecorder()
	front(c, u).ServeHTTP(rec, req)
	return rec
}

// decodeStatus returns the Status in a response body.
func decodeStatus(t *testing.T, body []byte) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("response is not a Status: %v: %s", err, body)
	}
	return s
}

// impersonatedExtra decodes the Impersonate-Extra-* headers a member saw.
func impersonatedExtra(t *testing.T, h http.Header) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for k, vv := range h {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "impersonate-extra-") {
			continue
		}
		key, err := url.PathUnescape(strings.TrimPrefix(lk, "impersonate-extra-"))
		if err != nil {
			t.Fatalf("bad extra header %q: %v", k, err)
		}
		out[key] = append(out[key], vv...)
	}
	return out
}
