package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/member/membertest"

	"k8s.io/apiserver/pkg/authentication/user"
)

// upgradeThrough sends an exec-like upgrade request for cluster through the
// Connecter as tom, with the client's own credentials set. On 101 it checks
// that bytes are echoed through the spliced connection.
func upgradeThrough(t *testing.T, c *Connecter, cluster string) (int, string) {
	t.Helper()
	srv := httptest.NewServer(front(c, tom))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = fmt.Fprintf(conn, "GET /clusters/%s/proxy/api/v1/namespaces/default/pods/p/exec?command=sh&stdin=true&tty=true HTTP/1.1\r\n"+
		"Host: %s\r\nConnection: Upgrade\r\nUpgrade: echo-test\r\n"+
		"Authorization: Bearer client-token\r\nImpersonate-User: system:admin\r\nImpersonate-Group: system:masters\r\n\r\n",
		cluster, srv.Listener.Addr())
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading upgrade response: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, msg := range []string{"ping\n", "pong\n"} {
		if _, err := io.WriteString(conn, msg); err != nil {
			t.Fatal(err)
		}
		got, err := br.ReadString('\n')
		if err != nil || got != msg {
			t.Fatalf("echo = %q, %v; want %q", got, err, msg)
		}
	}
	return resp.StatusCode, ""
}

// checkUpgradeRequest checks what the member saw of the upgrade request.
func checkUpgradeRequest(t *testing.T, got recorded) {
	t.Helper()
	if got.path != "/api/v1/namespaces/default/pods/p/exec" || got.rawQuery != "command=sh&stdin=true&tty=true" {
		t.Errorf("member saw %s?%s", got.path, got.rawQuery)
	}
	h := got.header
	if v := h.Values("Authorization"); !slices.Equal(v, []string{"Bearer imp-m1"}) {
		t.Errorf("Authorization = %q, want the impersonator token", v)
	}
	if v := h.Values("Impersonate-User"); !slices.Equal(v, []string{tom.Name}) {
		t.Errorf("Impersonate-User = %q, want %q", v, tom.Name)
	}
	if v := h.Values("Impersonate-Group"); !slices.Equal(v, []string{"system:serviceaccounts", "system:serviceaccounts:default"}) {
		t.Errorf("Impersonate-Group = %q", v)
	}
	if v := h.Values("Impersonate-Uid"); !slices.Equal(v, []string{tom.UID}) {
		t.Errorf("Impersonate-Uid = %q", v)
	}
	if extra := impersonatedExtra(t, h); len(extra) != 2 {
		t.Errorf("Impersonate-Extra-* = %v, want tom's two extras", extra)
	}
}

func TestUpgradeIsSpliced(t *testing.T) {
	t.Parallel()
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("member http2=%t", h2), func(t *testing.T) {
			t.Parallel()
			m := newMember(t, h2, membertest.UpgradeEcho)
			s := newStore()
			s.addCluster("m1", m, nil)
			code, body := upgradeThrough(t, s.connecter(), "m1")
			if code != http.StatusSwitchingProtocols {
				t.Fatalf("code = %d, want 101; body %s", code, body)
			}
			checkUpgradeRequest(t, m.last(t))
		})
	}
}

func TestUpgradeRefusedByMemberIsRelayed(t *testing.T) {
	t.Parallel()
	m := newMember(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `pods "p" is forbidden: User "system:serviceaccount:default:tom" cannot create resource "pods/exec"`, http.StatusForbidden)
	})
	s := newStore()
	s.addCluster("m1", m, nil)
	code, body := upgradeThrough(t, s.connecter(), "m1")
	if code != http.StatusForbidden || !strings.Contains(body, "system:serviceaccount:default:tom") {
		t.Errorf("code = %d, body %q; want the member's 403", code, body)
	}
}

func TestWatchIsFlushedIncrementally(t *testing.T) {
	t.Parallel()
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("member http2=%t", h2), func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			m := newMember(t, h2, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"}}}`+"\n")
				_ = http.NewResponseController(w).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				_, _ = io.WriteString(w, `{"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a"}}}`+"\n")
			})
			s := newStore()
			s.addCluster("m1", m, nil)
			srv := httptest.NewServer(front(s.connecter(), tom))
			defer srv.Close()

			resp, err := http.Get(srv.URL + "/clusters/m1/proxy/api/v1/pods?watch=true&resourceVersion=10")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("code = %d", resp.StatusCode)
			}
			lines := make(chan string)
			go func() {
				defer close(lines)
				br := bufio.NewReader(resp.Body)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					lines <- line
				}
			}()
			next := func(want string) {
				t.Helper()
				select {
				case line := <-lines:
					if !strings.Contains(line, want) {
						t.Fatalf("event = %q, want %s", line, want)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("event %s not flushed to the client", want)
				}
			}
			next(`"ADDED"`) // before the member sends anything else
			close(release)
			next(`"DELETED"`)
			if got := m.last(t).rawQuery; got != "watch=true&resourceVersion=10" {
				t.Errorf("member query = %q", got)
			}
		})
	}
}

func TestUpgradeWithoutUserFails(t *testing.T) {
	t.Parallel()
	m := newMember(t, false, membertest.UpgradeEcho)
	s := newStore()
	s.addCluster("m1", m, nil)
	rec := do(s.connecter(), user.Info(nil), http.MethodGet, "/clusters/m1/proxy/api/v1/namespaces/default/pods/p/exec",
		http.Header{"Connection": {"Upgrade"}, "Upgrade": {"echo-test"}}, "")
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("code = %d, want 500", rec.Code)
	}
}
