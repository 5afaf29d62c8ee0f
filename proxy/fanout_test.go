package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// fakeAPI serves fixed JSON documents by path to tom only (so probes that do
// not impersonate find nothing), 404 otherwise.
func fakeAPI(docs map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Impersonate-User") != tom.Name || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer imp-") {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Member-Path", r.URL.Path)
		_, _ = io.WriteString(w, doc)
	}
}

const podsPath = "/api/v1/namespaces/default/pods"

func pod(name string) string {
	return `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"default"}}`
}

// fanOutEnv has m1 (pods a, shared), m2 (pods b, shared; an annotation with
// HTML characters), m3 (forbids everything) and m4 (not ready, pod c).
type fanOutEnv struct {
	store          *store
	m1, m2, m3, m4 *member
}

func newFanOutEnv(t *testing.T) *fanOutEnv {
	t.Helper()
	e := &fanOutEnv{store: newStore()}
	e.m1 = newMember(t, false, fakeAPI(map[string]string{
		podsPath:                `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[` + pod("a") + `,` + pod("shared") + `]}`,
		podsPath + "/a":         pod("a"),
		podsPath + "/a/log":     `log of a`,
		podsPath + "/shared":    pod("shared"),
		"/api/v1/namespaces/ns": `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"ns"}}`,
	}))
	e.m2 = newMember(t, true, fakeAPI(map[string]string{
		podsPath:             `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"200"},"items":[{"kind":"Pod","metadata":{"name":"b","annotations":{"html":"<b>&</b>"}}}]}`,
		podsPath + "/b":      pod("b"),
		podsPath + "/shared": pod("shared"),
	}))
	e.m3 = newMember(t, false, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	})
	e.m4 = newMember(t, false, fakeAPI(map[string]string{podsPath + "/c": pod("c")}))
	e.store.addCluster("m1", e.m1, nil)
	e.store.addCluster("m2", e.m2, nil)
	e.store.addCluster("m3", e.m3, nil)
	e.store.addCluster("m4", e.m4, func(c *clusterv1alpha1.Cluster) { c.Status.Conditions[0].Status = metav1.ConditionUnknown })
	return e
}

func TestFanOutList(t *testing.T) {
	t.Parallel()
	e := newFanOutEnv(t)
	rec := do(e.store.connecter(), tom, http.MethodGet, "/clusters/*/proxy"+podsPath+"?limit=500",
		http.Header{"Accept": {"application/json;as=Table;v=v1;g=meta.k8s.io"}}, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("code = %d; body %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if got := rec.Header().Get("X-Member-Path"); got != podsPath {
		t.Errorf("headers of the first response not copied: X-Member-Path = %q", got)
	}
	if !strings.Contains(rec.Body.String(), `"<b>&</b>"`) {
		t.Errorf("items must pass through unescaped: %s", rec.Body)
	}
	var list struct {
		Kind     string `json:"kind"`
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		t.Fatalf("merged list: %v: %s", err, rec.Body)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Metadata.Name)
	}
	if diff := cmp.Diff([]string{"a", "shared", "b"}, names); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if list.Kind != "PodList" || list.Metadata.ResourceVersion != "100" {
		t.Errorf("list kind/metadata = %s/%s, want the first cluster's", list.Kind, list.Metadata.ResourceVersion)
	}
	for _, m := range []*member{e.m1, e.m2} {
		got := m.last(t)
		if got.rawQuery != "limit=500" || got.header.Get("Accept") != "application/json" {
			t.Errorf("member saw query %q accept %q", got.rawQuery, got.header.Get("Accept"))
		}
	}
	if n := len(e.m4.requests()); n != 0 {
		t.Errorf("not-ready cluster received %d requests", n)
	}
}

func TestFanOutNamedAndRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		method      string
		target      string
		wantCode    int
		wantBody    string // substring
		wantMember  string // cluster expected to get the real request
		wantPath    string
		wantQuery   string
		wantMessage string
	}{
		{
			name: "object in one cluster is proxied there", method: http.MethodGet,
			target: "/clusters/*/proxy" + podsPath + "/b", wantCode: 200, wantBody: `"name":"b"`,
			wantMember: "m2", wantPath: podsPath + "/b",
		},
		{
			name: "log subresource probes the pod", method: http.MethodGet,
			target: "/clusters/*/proxy" + podsPath + "/a/log?follow=true&container=app", wantCode: 200, wantBody: "log of a",
			wantMember: "m1", wantPath: podsPath + "/a/log", wantQuery: "follow=true&container=app",
		},
		{
			name: "delete goes to the one cluster", method: http.MethodDelete,
			target: "/clusters/*/proxy" + podsPath + "/a", wantCode: 200,
			wantMember: "m1", wantPath: podsPath + "/a",
		},
		{
			name: "namespace object", method: http.MethodGet,
			target: "/clusters/*/proxy/api/v1/namespaces/ns", wantCode: 200, wantBody: `"kind":"Namespace"`,
			wantMember: "m1", wantPath: "/api/v1/namespaces/ns",
		},
		{
			name: "object in two clusters conflicts", method: http.MethodGet,
			target: "/clusters/*/proxy" + podsPath + "/shared", wantCode: http.StatusConflict,
			wantMessage: "conflict resource, exist in more than one cluster: m1,m2",
		},
		{
			name: "object nowhere", method: http.MethodGet,
			target: "/clusters/*/proxy" + podsPath + "/missing", wantCode: http.StatusNotFound,
			wantMessage: "resource not found or don't have permission to get it",
		},
		{
			name: "object only in a not-ready cluster", method: http.MethodGet,
			target: "/clusters/*/proxy" + podsPath + "/c", wantCode: http.StatusNotFound,
			wantMessage: "resource not found or don't have permission to get it",
		},
		{
			name: "create on a collection", method: http.MethodPost,
			target: "/clusters/*/proxy" + podsPath, wantCode: http.StatusMethodNotAllowed,
			wantMessage: `verb "create" is not supported`,
		},
		{
			name: "watch on a collection", method: http.MethodGet,
			target: "/clusters/*/proxy" + podsPath + "?watch=true", wantCode: http.StatusMethodNotAllowed,
			wantMessage: `verb "watch" is not supported`,
		},
		{
			name: "non-resource path without host handler", method: http.MethodGet,
			target: "/clusters/*/proxy/version", wantCode: http.StatusNotFound,
			wantMessage: `path "/version" is not a resource path`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newFanOutEnv(t)
			members := map[string]*member{"m1": e.m1, "m2": e.m2, "m3": e.m3, "m4": e.m4}
			rec := do(e.store.connecter(), tom, tc.method, tc.target, nil, "")
			if rec.Code != tc.wantCode {
				t.Fatalf("code = %d, want %d; body %s", rec.Code, tc.wantCode, rec.Body)
			}
			if tc.wantMessage != "" {
				if msg := decodeStatus(t, rec.Body.Bytes()).Message; !strings.Contains(msg, tc.wantMessage) {
					t.Errorf("message = %q, want %q", msg, tc.wantMessage)
				}
			}
			if !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("body = %s, want it to contain %s", rec.Body, tc.wantBody)
			}
			if tc.wantMember != "" {
				got := members[tc.wantMember].last(t)
				if got.method != tc.method || got.path != tc.wantPath || got.rawQuery != tc.wantQuery {
					t.Errorf("%s saw %s %s?%s, want %s %s?%s", tc.wantMember, got.method, got.path, got.rawQuery,
						tc.method, tc.wantPath, tc.wantQuery)
				}
			}
			for name, m := range members {
				reqs := m.requests()
				if name == tc.wantMember {
					reqs = reqs[:len(reqs)-1] // the real request
				}
				for _, r := range reqs {
					if r.method != http.MethodGet || r.rawQuery != "" {
						t.Errorf("%s: probe %s %s?%s, want a GET without query", name, r.method, r.path, r.rawQuery)
					}
					if strings.HasSuffix(r.path, "/log") {
						t.Errorf("%s: probe of the log subresource %s", name, r.path)
					}
				}
			}
			if n := len(e.m4.requests()); n != 0 {
				t.Errorf("not-ready cluster received %d requests", n)
			}
		})
	}
}

func TestFanOutNonResourceGoesToHostHandler(t *testing.T) {
	t.Parallel()
	var got *http.Request
	host := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		_, _ = io.WriteString(w, `{"major":"1"}`)
	})
	c := newStore().connecter(WithHostHandler(host))
	rec := do(c, tom, http.MethodGet, "/clusters/*/proxy/version?timeout=5s",
		http.Header{"Authorization": {"Bearer client"}, "Impersonate-User": {"system:admin"}, "X-Remote-User": {"x"}}, "")
	if rec.Code != http.StatusOK || rec.Body.String() != `{"major":"1"}` {
		t.Fatalf("code = %d, body %s", rec.Code, rec.Body)
	}
	if got == nil {
		t.Fatal("host handler not called")
	}
	if got.URL.Path != "/version" || got.URL.RawQuery != "timeout=5s" {
		t.Errorf("host handler got %s?%s", got.URL.Path, got.URL.RawQuery)
	}
	for _, h := range []string{"Authorization", "Impersonate-User", "X-Remote-User"} {
		if got.Header.Get(h) != "" {
			t.Errorf("host handler got client header %s", h)
		}
	}
}

func TestMergeLists(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		bodies []string
		want   string
	}{
		{name: "none", want: ""},
		{name: "not JSON is skipped", bodies: []string{"oops", `{"kind":"L","items":[1]}`}, want: `{"items":[1],"kind":"L"}`},
		{name: "null items", bodies: []string{`{"kind":"L","items":null}`, `{"kind":"M","items":[2,3]}`}, want: `{"items":[2,3],"kind":"L"}`},
		{name: "empty lists", bodies: []string{`{"kind":"L","items":[]}`}, want: `{"items":[],"kind":"L"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var bodies [][]byte
			for _, b := range tc.bodies {
				bodies = append(bodies, []byte(b))
			}
			got, err := mergeLists(bodies)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("mergeLists = %s, want %s", got, tc.want)
			}
		})
	}
}
