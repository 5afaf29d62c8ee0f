package console

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// TestLoginMode: without a token every page sends to the login page; a
// token the control plane refuses is not kept; one it accepts is kept in
// an HttpOnly, SameSite=Strict cookie and every read is made with it, and
// the console's own credentials are never sent.
func TestLoginMode(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401,"message":"Unauthorized"}`))
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/selfsubjectreviews"):
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
				"status": map[string]any{"userInfo": map[string]any{"username": "alice"}}})
		case strings.HasSuffix(r.URL.Path, "/clusters"):
			_, _ = w.Write([]byte(`{"kind":"ClusterList","apiVersion":"cluster.karmada.io/v1alpha1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"member1"}}]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer api.Close()
	s, err := NewLogin(&rest.Config{Host: api.URL, BearerToken: "the-console's-own"})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	do := func(method, path, form string, cookie *http.Cookie) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(form))
		if form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := do(http.MethodGet, "/", "", nil); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/login" {
		t.Errorf("a page without a token: %d %s, want 303 to /login", rec.Code, rec.Header().Get("Location"))
	}
	if rec := do(http.MethodGet, "/login", "", nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `name="bearer"`) {
		t.Errorf("login page: %d", rec.Code)
	}
	if rec := do(http.MethodPost, "/login", "bearer=good", nil); rec.Code != http.StatusForbidden {
		t.Errorf("a login without the page's token: %d, want 403", rec.Code)
	}
	form := func(bearer string) string {
		return url.Values{"token": {s.token}, "bearer": {bearer}}.Encode()
	}
	rec := do(http.MethodPost, "/login", form("bad"), nil)
	if rec.Code != http.StatusUnauthorized || len(rec.Result().Cookies()) != 0 || !strings.Contains(rec.Body.String(), "does not accept this token") {
		t.Errorf("a refused token: %d, cookies %v", rec.Code, rec.Result().Cookies())
	}
	rec = do(http.MethodPost, "/login", form("good"), nil)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) != 1 || cookies[0].Value != "good" || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("an accepted token: %d, cookies %+v", rec.Code, cookies)
	}
	rec = do(http.MethodGet, "/", "", cookies[0])
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-cluster="member1"`) || !strings.Contains(rec.Body.String(), "Log out") {
		t.Errorf("the fleet as alice: %d\n%s", rec.Code, rec.Body.String())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range seen {
		if strings.Contains(a, "own") {
			t.Errorf("the console sent its own credentials: %q", a)
		}
	}
}
