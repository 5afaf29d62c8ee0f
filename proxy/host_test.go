package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/rest"
)

// fakeHost is the host API server: it records requests and answers 200 only
// to the server's token impersonating tom (so a request sent as the server
// itself, or as anyone else, fails).
type fakeHost struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newFakeHost(t *testing.T) *fakeHost {
	t.Helper()
	h := &fakeHost{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.reqs = append(h.reqs, r.Clone(r.Context()))
		h.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer server-token" || r.Header.Get("Impersonate-User") != tom.Name {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, "host:"+r.URL.Path)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *fakeHost) requests() []*http.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*http.Request(nil), h.reqs...)
}

func hostConnecter(t *testing.T, h *fakeHost) *Connecter {
	t.Helper()
	opt, err := WithHost(&rest.Config{Host: h.URL, BearerToken: "server-token"})
	if err != nil {
		t.Fatal(err)
	}
	return newStore().connecter(opt)
}

func TestFanOutNonResourceGoesToHostAsCaller(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	rec := do(hostConnecter(t, h), tom, http.MethodGet, "/clusters/*/proxy/metrics?timeout=5s", http.Header{
		"Authorization": {"Bearer client"}, "Impersonate-User": {"system:admin"}, "Impersonate-Group": {"system:masters"},
		"X-Remote-User": {"x"},
	}, "")
	if rec.Code != http.StatusOK || rec.Body.String() != "host:/metrics" {
		t.Fatalf("code = %d, body %s", rec.Code, rec.Body)
	}
	reqs := h.requests()
	if len(reqs) != 1 {
		t.Fatalf("host got %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.URL.Path != "/metrics" || got.URL.RawQuery != "timeout=5s" || got.Method != http.MethodGet {
		t.Errorf("host got %s %s?%s", got.Method, got.URL.Path, got.URL.RawQuery)
	}
	// The caller's identity, exactly: not the client's claims, and not the
	// groups every authenticated request gets.
	if diff := cmp.Diff([]string{tom.Name}, got.Header.Values("Impersonate-User")); diff != "" {
		t.Errorf("Impersonate-User (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"system:serviceaccounts", "system:serviceaccounts:default"}, got.Header.Values("Impersonate-Group")); diff != "" {
		t.Errorf("Impersonate-Group (-want +got):\n%s", diff)
	}
	if uid := got.Header.Get("Impersonate-Uid"); uid != tom.UID {
		t.Errorf("Impersonate-Uid = %q", uid)
	}
	// Header names are case-insensitive: the host reads extra keys lowercased.
	wantExtra := map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=abc"}, "example.com/scopes": {"read", "write"}}
	if diff := cmp.Diff(wantExtra, impersonatedExtra(t, got.Header)); diff != "" {
		t.Errorf("Impersonate-Extra (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Bearer server-token"}, got.Header.Values("Authorization")); diff != "" {
		t.Errorf("Authorization (-want +got):\n%s", diff)
	}
	if v := got.Header.Get("X-Remote-User"); v != "" {
		t.Errorf("client's X-Remote-User reached the host: %q", v)
	}
}

func TestFanOutNonResourceRefusals(t *testing.T) {
	t.Parallel()
	nameless := &user.DefaultInfo{Groups: []string{"system:masters"}}
	tests := []struct {
		name     string
		user     user.Info
		method   string
		path     string
		wantCode int
		wantMsg  string
	}{
		{name: "PUT /debug/flags/v", user: tom, method: http.MethodPut, path: "/debug/flags/v",
			wantCode: http.StatusMethodNotAllowed, wantMsg: "PUT /debug/flags/v is not allowed through clusters/*/proxy"},
		{name: "POST", user: tom, method: http.MethodPost, path: "/debug/pprof/profile",
			wantCode: http.StatusMethodNotAllowed, wantMsg: "GET and HEAD only"},
		{name: "DELETE", user: tom, method: http.MethodDelete, path: "/metrics", wantCode: http.StatusMethodNotAllowed},
		{name: "user without a name", user: nameless, method: http.MethodGet, path: "/metrics",
			wantCode: http.StatusForbidden, wantMsg: "no user name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newFakeHost(t)
			rec := do(hostConnecter(t, h), tc.user, tc.method, "/clusters/*/proxy"+tc.path, nil, "1")
			if rec.Code != tc.wantCode {
				t.Fatalf("code = %d, want %d; body %s", rec.Code, tc.wantCode, rec.Body)
			}
			if msg := decodeStatus(t, rec.Body.Bytes()).Message; !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("message = %q, want %q", msg, tc.wantMsg)
			}
			if n := len(h.requests()); n != 0 {
				t.Errorf("host got %d requests, want none", n)
			}
		})
	}
}

func TestFanOutHeadGoesToHost(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	rec := do(hostConnecter(t, h), tom, http.MethodHead, "/clusters/*/proxy/version", nil, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("code = %d; body %s", rec.Code, rec.Body)
	}
	reqs := h.requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodHead || reqs[0].Header.Get("Impersonate-User") != tom.Name {
		t.Errorf("host requests %v", reqs)
	}
}
