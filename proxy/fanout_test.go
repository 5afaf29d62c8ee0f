package proxy

import (
	"encoding/json"
	"fmt"
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
	m1, m2, m3, m4 *fakeMember
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
	for _, m := range []*fakeMember{e.m1, e.m2} {
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
			members := map[string]*fakeMember{"m1": e.m1, "m2": e.m2, "m3": e.m3, "m4": e.m4}
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

func TestFanOutListSizeIsBounded(t *testing.T) {
	t.Parallel()
	// Each member's list is a little over 1 KiB.
	items := make([]string, 10)
	for i := range items {
		items[i] = pod(fmt.Sprintf("p%d-%s", i, strings.Repeat("x", 30)))
	}
	list := `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[` + strings.Join(items, ",") + `]}`
	if len(list) < 1024 || len(list) > 1536 {
		t.Fatalf("test list is %d bytes, want a little over 1 KiB", len(list))
	}
	newEnv := func(members int) *store {
		s := newStore()
		for i := range members {
			s.addCluster(fmt.Sprintf("m%d", i+1), newMember(t, false, fakeAPI(map[string]string{podsPath: list})), nil)
		}
		return s
	}
	tests := []struct {
		name     string
		members  int
		limit    int64
		wantCode int
	}{
		{name: "under the limit", members: 2, limit: 4 << 10, wantCode: http.StatusOK},
		{name: "members together over the limit", members: 3, limit: 3 << 10, wantCode: http.StatusRequestEntityTooLarge},
		{name: "one member over the limit", members: 1, limit: 1 << 10, wantCode: http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newEnv(tc.members).connecter(WithMaxListBytes(tc.limit))
			rec := do(c, tom, http.MethodGet, "/clusters/*/proxy"+podsPath, nil, "")
			if rec.Code != tc.wantCode {
				t.Fatalf("code = %d, want %d; body %.300s", rec.Code, tc.wantCode, rec.Body)
			}
			if tc.wantCode == http.StatusOK {
				return
			}
			st := decodeStatus(t, rec.Body.Bytes())
			if st.Reason != metav1.StatusReasonRequestEntityTooLarge {
				t.Errorf("reason = %q", st.Reason)
			}
			for _, want := range []string{byteSize(tc.limit), "limit", "selector", "continue"} {
				if !strings.Contains(st.Message, want) {
					t.Errorf("message %q does not mention %q", st.Message, want)
				}
			}
		})
	}
	if c := newStore().connecter(); c.maxListBytes != DefaultMaxListBytes || DefaultMaxListBytes != 64<<20 {
		t.Errorf("default limit %d, want 64 MiB", c.maxListBytes)
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
