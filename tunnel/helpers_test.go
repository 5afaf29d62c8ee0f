package tunnel

import (
	"bufio"
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
)

// member is a fake member API server over TLS (HTTP/2 offered) that
// records the headers of every request. Paths:
//   - /watch writes a first event, then the second one once release is
//     closed;
//   - an upgrade to any protocol is accepted and echoed back;
//   - anything else answers JSON naming the member.
type member struct {
	*httptest.Server
	name    string
	release chan struct{}

	mu   sync.Mutex
	reqs []*http.Request
}

func newMember(t *testing.T, name string) *member {
	t.Helper()
	m := &member{name: name, release: make(chan struct{})}
	m.Server = httptest.NewUnstartedServer(http.HandlerFunc(m.serve))
	m.EnableHTTP2 = true
	m.Config.ErrorLog = log.New(io.Discard, "", 0)
	m.StartTLS()
	t.Cleanup(m.Close)
	return m
}

func (m *member) serve(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.reqs = append(m.reqs, r.Clone(context.Background()))
	m.mu.Unlock()
	switch {
	case r.Header.Get("Upgrade") != "":
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			http.Error(w, "cannot upgrade: "+err.Error(), http.StatusInternalServerError)
			return
		}
		defer func() { _ = conn.Close() }()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + r.Header.Get("Upgrade") + "\r\n\r\n")
		_ = brw.Flush()
		_, _ = io.Copy(conn, brw)
	case r.URL.Path == "/watch":
		w.Header().Set("Content-Type", "application/json;stream=watch")
		_, _ = io.WriteString(w, `{"type":"ADDED"}`+"\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			return
		}
		select {
		case <-m.release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"type":"MODIFIED"}`+"\n")
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"member":"`+m.name+`","path":"`+r.URL.Path+`"}`)
	}
}

func (m *member) last(t *testing.T) *http.Request {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.reqs) == 0 {
		t.Fatal("the member received no request")
	}
	return m.reqs[len(m.reqs)-1]
}

// config is the agent's configuration of the member: its CA and a token.
func (m *member) config() *rest.Config {
	return &rest.Config{
		Host:            m.URL,
		BearerToken:     "member-token-" + m.name,
		TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: m.Certificate().Raw})},
	}
}

// controlPlane is a fake flotilla-apiserver behind TLS serving the tunnel
// subresource with Server.Handler; bearer tokens name users.
type controlPlane struct {
	*httptest.Server
	tunnels *Server
}

// tokens maps the bearer tokens of the tests to users.
var tokens = map[string]user.Info{
	"agent-member3": &user.DefaultInfo{Name: "system:karmada:agent:member3", Groups: []string{"system:karmada:agents"}},
	"agent-member1": &user.DefaultInfo{Name: "system:karmada:agent:member1", Groups: []string{"system:karmada:agents"}},
	"admin":         &user.DefaultInfo{Name: "system:admin", Groups: []string{"system:masters"}},
}

func newControlPlane(t *testing.T) *controlPlane {
	t.Helper()
	cp := &controlPlane{tunnels: NewServer()}
	mux := http.NewServeMux()
	mux.HandleFunc("/apis/cluster.karmada.io/v1alpha1/clusters/{name}/tunnel", func(w http.ResponseWriter, r *http.Request) {
		if u, ok := tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]; ok {
			r = r.WithContext(request.WithUser(r.Context(), u))
		}
		cp.tunnels.Handler(r.PathValue("name")).ServeHTTP(w, r)
	})
	cp.Server = httptest.NewUnstartedServer(mux)
	cp.Config.ErrorLog = log.New(io.Discard, "", 0)
	cp.StartTLS()
	t.Cleanup(func() {
		cp.tunnels.Close()
		cp.Close()
	})
	return cp
}

// config is an agent's configuration of the control plane.
func (cp *controlPlane) config(token string) *rest.Config {
	return &rest.Config{
		Host:            cp.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cp.Certificate().Raw})},
	}
}

// startAgent runs the agent of cluster with token until the test ends or
// the returned function stops it, reconnecting after 50ms.
func startAgent(t *testing.T, cp *controlPlane, token, cluster string, m *member) (stop func()) {
	t.Helper()
	a, err := newAgent(cp.config(token), cluster, m.config())
	if err != nil {
		t.Fatal(err)
	}
	a.minBackoff, a.maxBackoff = 50*time.Millisecond, 200*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.run(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}

// eventually waits up to 10s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// client sends requests through the tunnel of cluster.
func client(t *testing.T, s *Server, cluster string) *http.Client {
	t.Helper()
	dial, _ := s.DialContext(cluster)
	tr := &http.Transport{DialContext: dial}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// get GETs path on the member of cluster through the tunnel and returns the
// body.
func get(t *testing.T, c *http.Client, cluster, path string) string {
	t.Helper()
	resp, err := c.Get("http://" + cluster + ".tunnel" + path)
	if err != nil {
		t.Fatalf("GET %s through the tunnel: %v", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s through the tunnel: %s: %s", path, resp.Status, body)
	}
	return string(body)
}

// echo checks that an upgraded connection echoes what is written to it.
func echo(t *testing.T, rw io.ReadWriter) {
	t.Helper()
	br := bufio.NewReader(rw)
	for _, msg := range []string{"ping\n", "pong\n"} {
		if _, err := io.WriteString(rw, msg); err != nil {
			t.Fatal(err)
		}
		got, err := br.ReadString('\n')
		if err != nil || got != msg {
			t.Fatalf("echo = %q, %v; want %q", got, err, msg)
		}
	}
}
