package member

import (
	"bufio"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/member/membertest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// transportEnv is a member API server over TLS and the Cluster and Secrets
// of the control plane that reach it.
type transportEnv struct {
	member *httptest.Server
	// closed counts the member's connections that were closed.
	closed atomic.Int32

	mu      sync.Mutex
	cluster *clusterv1alpha1.Cluster
	secrets map[string]*corev1.Secret
	cache   *Cache
}

// newTransportEnv starts a member serving membertest.UpgradeEcho and a Ready-less
// Push Cluster "m1" with a secretRef holding the member's CA and an
// impersonator Secret holding "imp-m1".
func newTransportEnv(t *testing.T) *transportEnv {
	t.Helper()
	e := &transportEnv{secrets: map[string]*corev1.Secret{}}
	e.member = httptest.NewUnstartedServer(http.HandlerFunc(membertest.UpgradeEcho))
	e.member.Config.ErrorLog = log.New(io.Discard, "", 0)
	e.member.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			e.closed.Add(1)
		}
	}
	e.member.StartTLS()
	t.Cleanup(e.member.Close)
	ns := names.SecretNamespace
	e.cluster = &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", ResourceVersion: "1"},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:              clusterv1alpha1.Push,
			APIEndpoint:           e.member.URL,
			SecretRef:             &clusterv1alpha1.LocalSecretReference{Namespace: ns, Name: "m1"},
			ImpersonatorSecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: ns, Name: "m1-impersonator"},
		},
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.member.Certificate().Raw})
	e.secrets[ns+"/m1"] = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", ResourceVersion: "1"},
		Data:       map[string][]byte{names.SecretCABundleKey: ca, names.SecretTokenKey: []byte("control-plane-token")},
	}
	e.secrets[ns+"/m1-impersonator"] = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1-impersonator", ResourceVersion: "1"},
		Data:       map[string][]byte{names.SecretTokenKey: []byte("imp-m1")},
	}
	e.cache = NewCache(e.getSecret)
	return e
}

func (e *transportEnv) getSecret(namespace, name string) (*corev1.Secret, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.secrets[namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
	}
	return s, nil
}

// updateCluster replaces the Cluster with a changed copy, as an informer would.
func (e *transportEnv) updateCluster(mutate func(*clusterv1alpha1.Cluster)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.cluster.DeepCopy()
	mutate(c)
	e.cluster = c
}

// updateSecret replaces a Secret with a changed copy.
func (e *transportEnv) updateSecret(name string, mutate func(*corev1.Secret)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := names.SecretNamespace + "/" + name
	s := e.secrets[key].DeepCopy()
	mutate(s)
	e.secrets[key] = s
}

func (e *transportEnv) transport(t *testing.T) *Transport {
	t.Helper()
	e.mu.Lock()
	c := e.cluster
	e.mu.Unlock()
	tr, err := e.cache.Transport(c)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// get sends a GET through tr's RoundTripper and fails the test unless the
// member answers 200.
func get(t *testing.T, tr *Transport) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, tr.Location.String()+"/api", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTripper.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api: %s", resp.Status)
	}
}

func TestTransportReuseAndRebuild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		change      func(e *transportEnv)
		wantRebuilt bool
		wantToken   string
	}{
		{name: "nothing changes", wantToken: "imp-m1"},
		{
			name: "status update only",
			change: func(e *transportEnv) {
				e.updateCluster(func(c *clusterv1alpha1.Cluster) {
					c.ResourceVersion = "2"
					c.Status.KubernetesVersion = "v1.36.3"
				})
			},
			wantToken: "imp-m1",
		},
		{
			name: "impersonator secret rotated",
			change: func(e *transportEnv) {
				e.updateSecret("m1-impersonator", func(s *corev1.Secret) {
					s.ResourceVersion = "2"
					s.Data[names.SecretTokenKey] = []byte("imp-rotated")
				})
			},
			wantRebuilt: true,
			wantToken:   "imp-rotated",
		},
		{
			name: "secretRef secret updated",
			change: func(e *transportEnv) {
				e.updateSecret("m1", func(s *corev1.Secret) { s.ResourceVersion = "7" })
			},
			wantRebuilt: true,
			wantToken:   "imp-m1",
		},
		{
			name: "secret without resourceVersion changes content",
			change: func(e *transportEnv) {
				e.updateSecret("m1-impersonator", func(s *corev1.Secret) {
					s.ResourceVersion = ""
					s.Data[names.SecretTokenKey] = []byte("imp-no-rv")
				})
			},
			wantRebuilt: true,
			wantToken:   "imp-no-rv",
		},
		{
			name: "proxyHeader changed",
			change: func(e *transportEnv) {
				e.updateCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyHeader = map[string]string{"X-A": "b"} })
			},
			wantRebuilt: true,
			wantToken:   "imp-m1",
		},
		{
			name: "insecureSkipTLSVerification toggled",
			change: func(e *transportEnv) {
				e.updateCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.InsecureSkipTLSVerification = true })
			},
			wantRebuilt: true,
			wantToken:   "imp-m1",
		},
		{
			name: "apiEndpoint changed",
			change: func(e *transportEnv) {
				e.updateCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = e.member.URL + "/" })
			},
			wantRebuilt: true,
			wantToken:   "imp-m1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTransportEnv(t)
			before := e.transport(t)
			if again := e.transport(t); again != before {
				t.Fatal("transport rebuilt although nothing changed")
			}
			get(t, before) // one idle connection to close on a rebuild
			if tc.change != nil {
				tc.change(e)
			}
			after := e.transport(t)
			if rebuilt := after != before; rebuilt != tc.wantRebuilt {
				t.Errorf("rebuilt = %t, want %t", rebuilt, tc.wantRebuilt)
			}
			if tc.wantRebuilt && after.RoundTripper == before.RoundTripper {
				t.Error("rebuilt transport shares the old RoundTripper")
			}
			if again := e.transport(t); again != after {
				t.Error("transport rebuilt twice for one change")
			}
			if after.Token != tc.wantToken {
				t.Errorf("Token = %q, want %q (the impersonator's)", after.Token, tc.wantToken)
			}
			get(t, after)
			// The old snapshot's idle connection is closed on a rebuild, and
			// only then.
			wantClosed := int32(0)
			if tc.wantRebuilt {
				wantClosed = 1
			}
			deadline := time.Now().Add(5 * time.Second)
			for e.closed.Load() < wantClosed && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := e.closed.Load(); got != wantClosed {
				t.Errorf("member saw %d connections closed, want %d", got, wantClosed)
			}
		})
	}
}

func TestTransportConcurrentBuildsOnce(t *testing.T) {
	t.Parallel()
	e := newTransportEnv(t)
	got := make([]*Transport, 32)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i], _ = e.cache.Transport(e.cluster)
		})
	}
	wg.Wait()
	for _, tr := range got {
		if tr == nil || tr != got[0] {
			t.Fatal("concurrent first callers got different transports")
		}
	}
}

func TestTransportForgetAndRetain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		drop func(c *Cache, cluster *clusterv1alpha1.Cluster)
	}{
		{name: "Forget", drop: func(c *Cache, cl *clusterv1alpha1.Cluster) { c.Forget(cl.Name) }},
		{name: "Retain without it", drop: func(c *Cache, _ *clusterv1alpha1.Cluster) { c.Retain(nil) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTransportEnv(t)
			before := e.transport(t)
			e.cache.Retain([]*clusterv1alpha1.Cluster{e.cluster})
			if again := e.transport(t); again != before {
				t.Fatal("Retain dropped the transport of a retained cluster")
			}
			tc.drop(e.cache, e.cluster)
			if again := e.transport(t); again == before {
				t.Error("the transport of a dropped cluster is still cached")
			}
		})
	}
}

func TestTransportErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		change     func(e *transportEnv)
		wantReason string // a SettingsError's; "" for another error
		wantErr    string
	}{
		{
			name: "no impersonatorSecretRef",
			change: func(e *transportEnv) {
				e.updateCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.ImpersonatorSecretRef = nil })
			},
			wantReason: "spec.impersonatorSecretRef is not set",
		},
		{
			name: "impersonator secret missing",
			change: func(e *transportEnv) {
				e.mu.Lock()
				delete(e.secrets, names.SecretNamespace+"/m1-impersonator")
				e.mu.Unlock()
			},
			wantReason: "secret karmada-cluster/m1-impersonator (spec.impersonatorSecretRef) not found",
		},
		{
			name: "impersonator token blank",
			change: func(e *transportEnv) {
				e.updateSecret("m1-impersonator", func(s *corev1.Secret) { s.Data[names.SecretTokenKey] = []byte(" \n") })
			},
			wantReason: `impersonator secret karmada-cluster/m1-impersonator has no "token" key`,
		},
		{
			name: "caBundle is not PEM",
			change: func(e *transportEnv) {
				e.updateSecret("m1", func(s *corev1.Secret) { s.Data[names.SecretCABundleKey] = []byte("garbage") })
			},
			wantReason: `key "caBundle" of secret karmada-cluster/m1 holds no PEM certificate`,
		},
		{
			name:       "no apiEndpoint",
			change:     func(e *transportEnv) { e.updateCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "" }) },
			wantReason: "spec.apiEndpoint is not set",
		},
		{
			name: "unsupported proxyURL scheme",
			change: func(e *transportEnv) {
				e.updateCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "ftp://proxy:21" })
			},
			wantReason: `spec.proxyURL "ftp://proxy:21": scheme must be http, https or socks5`,
		},
		{
			name: "secret read fails",
			change: func(e *transportEnv) {
				e.cache.getSecret = func(string, string) (*corev1.Secret, error) { return nil, errors.New("host on fire") }
			},
			wantErr: "host on fire",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTransportEnv(t)
			tc.change(e)
			_, err := e.cache.Transport(e.cluster)
			if err == nil {
				t.Fatal("want an error")
			}
			var settings *SettingsError
			isSettings := errors.As(err, &settings)
			if isSettings != (tc.wantReason != "") {
				t.Fatalf("err = %v; SettingsError = %t, want %t", err, isSettings, tc.wantReason != "")
			}
			if isSettings && (settings.Cluster != "m1" || !strings.Contains(settings.Reason, tc.wantReason)) {
				t.Errorf("SettingsError = %+v, want cluster m1 and a reason containing %q", settings, tc.wantReason)
			}
			if tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestTunnelTransport(t *testing.T) {
	t.Parallel()
	// The agent's end of the tunnel: plain HTTP, whatever the host.
	var hosts []string
	var mu sync.Mutex
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		membertest.UpgradeEcho(w, r)
	}))
	t.Cleanup(agent.Close)
	var connected atomic.Bool
	var d net.Dialer
	c := NewCache(nil) // no secret is ever read
	c.Tunnel = func(string) (DialFunc, bool) {
		return func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", agent.Listener.Addr().String())
		}, connected.Load()
	}
	pull := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}

	if _, err := c.Transport(pull); !errors.Is(err, ErrAgentNotConnected) {
		t.Fatalf("agent away: err = %v, want ErrAgentNotConnected", err)
	}
	connected.Store(true)
	tr, err := c.Transport(pull)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Token != "" {
		t.Errorf("a tunnel transport carries a token: %q", tr.Token)
	}
	get(t, tr)
	if again, _ := c.Transport(pull); again != tr {
		t.Error("an unchanged tunnel built a new transport")
	}
	connected.Store(false)
	if _, err := c.Transport(pull); !errors.Is(err, ErrAgentNotConnected) {
		t.Errorf("agent gone: err = %v, want ErrAgentNotConnected", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) != 1 || hosts[0] != TunnelHost("member3") {
		t.Errorf("agent saw hosts %q, want [%q]", hosts, TunnelHost("member3"))
	}
}

// upgradeThrough opens an upgraded stream to tr's member the way an
// upgrade-aware handler does (DialURL with the Upgrade transport) and checks
// that bytes are echoed.
func upgradeThrough(t *testing.T, tr *Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := *tr.Location
	u.Path = "/api/v1/namespaces/default/pods/p/exec"
	conn, err := utilproxy.DialURL(ctx, &u, tr.Upgrade)
	if err != nil {
		t.Fatalf("dialing the upgrade: %v", err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: echo-test\r\n\r\n", u.Path, u.Host); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading upgrade response: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", resp.Status)
	}
	if _, err := io.WriteString(conn, "ping\n"); err != nil {
		t.Fatal(err)
	}
	if got, err := br.ReadString('\n'); err != nil || got != "ping\n" {
		t.Fatalf("echo = %q, %v", got, err)
	}
}
