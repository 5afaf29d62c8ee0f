package member

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// proxied is one connection a test proxy opened for a client.
type proxied struct {
	target string
	header http.Header // CONNECT request headers (HTTP proxies)
	user   string      // SOCKS5 user name
}

// testProxy records the tunnels it opened.
type testProxy struct {
	url     string
	mu      sync.Mutex
	tunnels []proxied
}

func (p *testProxy) record(tn proxied) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tunnels = append(p.tunnels, tn)
}

func (p *testProxy) recorded() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxied(nil), p.tunnels...)
}

func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(a, b); done <- struct{}{} }()
	go func() { _, _ = io.Copy(b, a); done <- struct{}{} }()
	<-done
	_ = a.Close()
	_ = b.Close()
}

// newConnectProxy starts an HTTP (or, with useTLS, HTTPS) CONNECT proxy that
// requires basic auth "user:secret".
func newConnectProxy(t *testing.T, useTLS bool) *testProxy {
	t.Helper()
	p := &testProxy{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		if r.Header.Get("Proxy-Authorization") != "Basic dXNlcjpzZWNyZXQ=" {
			http.Error(w, "auth", http.StatusProxyAuthRequired)
			return
		}
		p.record(proxied{target: r.Host, header: r.Header.Clone()})
		backend, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			_ = backend.Close()
			return
		}
		_, _ = brw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
		_ = brw.Flush()
		splice(conn, backend)
	})
	var srv *httptest.Server
	if useTLS {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("user", "secret")
	p.url = u.String()
	return p
}

// newSOCKS5Proxy starts a SOCKS5 proxy; with a non-empty user it requires
// username/password authentication with password "secret".
func newSOCKS5Proxy(t *testing.T, user string) *testProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	p := &testProxy{url: "socks5://" + ln.Addr().String()}
	if user != "" {
		p.url = "socks5://" + user + ":secret@" + ln.Addr().String()
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serveSOCKS5(conn, user)
		}
	}()
	return p
}

func (p *testProxy) serveSOCKS5(conn net.Conn, wantUser string) {
	fail := func() { _ = conn.Close() }
	buf := make([]byte, 512)
	if _, err := io.ReadFull(conn, buf[:2]); err != nil || buf[0] != 5 {
		fail()
		return
	}
	methods := buf[2 : 2+int(buf[1])]
	if _, err := io.ReadFull(conn, methods); err != nil {
		fail()
		return
	}
	method := byte(0)
	if wantUser != "" {
		method = 2
	}
	if !slices.Contains(methods, method) {
		_, _ = conn.Write([]byte{5, 0xff})
		fail()
		return
	}
	_, _ = conn.Write([]byte{5, method})
	var gotUser string
	if method == 2 {
		if _, err := io.ReadFull(conn, buf[:2]); err != nil {
			fail()
			return
		}
		name := make([]byte, buf[1])
		_, _ = io.ReadFull(conn, name)
		_, _ = io.ReadFull(conn, buf[:1])
		password := make([]byte, buf[0])
		_, _ = io.ReadFull(conn, password)
		if string(name) != wantUser || string(password) != "secret" {
			_, _ = conn.Write([]byte{1, 1})
			fail()
			return
		}
		_, _ = conn.Write([]byte{1, 0})
		gotUser = string(name)
	}
	if _, err := io.ReadFull(conn, buf[:4]); err != nil || buf[1] != 1 {
		fail()
		return
	}
	var host string
	switch buf[3] {
	case 1:
		_, _ = io.ReadFull(conn, buf[:4])
		host = net.IP(buf[:4]).String()
	case 4:
		_, _ = io.ReadFull(conn, buf[:16])
		host = net.IP(buf[:16]).String()
	case 3:
		_, _ = io.ReadFull(conn, buf[:1])
		name := make([]byte, buf[0])
		_, _ = io.ReadFull(conn, name)
		host = string(name)
	}
	_, _ = io.ReadFull(conn, buf[:2])
	target := net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(buf[:2]))))
	backend, err := net.Dial("tcp", target)
	if err != nil {
		_, _ = conn.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		fail()
		return
	}
	p.record(proxied{target: target, user: gotUser})
	_, _ = conn.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
	splice(conn, backend)
}

// Both the plain and the upgrade transport of a member go through
// spec.proxyURL, with spec.proxyHeader on CONNECT and the URL's user.
func TestTransportGoesThroughProxyURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		proxy      func(t *testing.T) *testProxy
		wantHeader []string // X-Proxy-Token values seen in CONNECT
		wantUser   string
	}{
		{name: "http CONNECT", proxy: func(t *testing.T) *testProxy { return newConnectProxy(t, false) }, wantHeader: []string{"a", "b"}},
		{name: "https CONNECT", proxy: func(t *testing.T) *testProxy { return newConnectProxy(t, true) }, wantHeader: []string{"a", "b"}},
		{name: "socks5", proxy: func(t *testing.T) *testProxy { return newSOCKS5Proxy(t, "") }},
		{name: "socks5 with password", proxy: func(t *testing.T) *testProxy { return newSOCKS5Proxy(t, "karmada") }, wantUser: "karmada"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTransportEnv(t)
			p := tc.proxy(t)
			e.updateCluster(func(c *clusterv1alpha1.Cluster) {
				c.Spec.ProxyURL = p.url
				c.Spec.ProxyHeader = map[string]string{"X-Proxy-Token": "a, b"}
			})
			tr := e.transport(t)
			get(t, tr)
			upgradeThrough(t, tr)

			memberAddr := e.member.Listener.Addr().String()
			tunnels := p.recorded()
			if len(tunnels) != 2 {
				t.Fatalf("proxy opened %d tunnels, want 2 (plain, upgrade)", len(tunnels))
			}
			for _, tn := range tunnels {
				if tn.target != memberAddr {
					t.Errorf("tunnel to %s, want %s", tn.target, memberAddr)
				}
				if tc.wantHeader != nil {
					if diff := cmp.Diff(tc.wantHeader, tn.header.Values("X-Proxy-Token")); diff != "" {
						t.Errorf("proxyHeader on CONNECT (-want +got):\n%s", diff)
					}
				}
				if tn.user != tc.wantUser {
					t.Errorf("SOCKS5 user = %q, want %q", tn.user, tc.wantUser)
				}
			}
		})
	}
}
