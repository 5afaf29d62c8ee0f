package index

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestImageTerms(t *testing.T) {
	tests := []struct {
		ref  string
		want []string
	}{
		{"nginx", []string{"nginx"}},
		{"nginx:1.19", []string{"nginx", "nginx:1.19"}},
		{"docker.io/library/nginx:1.19", []string{
			"docker.io/library/nginx", "docker.io/library/nginx:1.19",
			"library/nginx", "library/nginx:1.19",
			"nginx", "nginx:1.19",
		}},
		{"localhost:5000/app", []string{"localhost:5000/app", "app"}},
		{"localhost:5000/app:v1", []string{"localhost:5000/app", "localhost:5000/app:v1", "app", "app:v1"}},
		{"app@sha256:abc", []string{"app", "app@sha256:abc"}},
		{"reg/app:v1@sha256:abc", []string{"reg/app", "reg/app:v1@sha256:abc", "app", "app:v1@sha256:abc"}},
		{" ", nil},
		{"trailing/", []string{"trailing/"}},
	}
	for _, tc := range tests {
		got := imageTerms(tc.ref, nil)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("imageTerms(%q) (-want +got):\n%s", tc.ref, diff)
		}
	}
}

func TestExtract(t *testing.T) {
	_, cron := fixtureByName(t, "backup")
	_, deploy := fixtureByName(t, "web")
	nodeKey, node := fixtureByName(t, "node-a")
	secretKey, secret := fixtureByName(t, "creds")
	web1 := podSpec{cluster: "m", ns: "default", name: "web-1", images: []string{"nginx:1.19", "busybox"}, node: "node-a", phase: "Running",
		labels: map[string]string{"app": "web"}}

	tests := []struct {
		name string
		key  Key
		obj  map[string]interface{}
		want func(t *testing.T, f *docFields)
	}{
		{"pod", podKey("m", "default", "web-1"), web1.object(), func(t *testing.T, f *docFields) {
			check(t, "images", []string{"nginx:1.19", "busybox"}, f.images)
			check(t, "node", "node-a", f.node)
			check(t, "phase", "Running", f.phase)
			check(t, "conditions", []string{"Initialized=True", "Ready=True", "ContainersReady=True", "PodScheduled=True"}, f.conditions)
			check(t, "labels", []keyValue{{"app", "web"}}, f.labels)
			check(t, "annotations", []keyValue{{"kwok.x-k8s.io/node", "fake"}}, f.annotations)
			for _, s := range []string{"web-1", "default", "Pod", "nginx:1.19", "ClusterFirst", "fake"} {
				if !slices.Contains(f.text, s) {
					t.Errorf("text lacks %q", s)
				}
			}
			for _, s := range f.text {
				if strings.Contains(s, "managedfieldsonly") || strings.Contains(s, "secretword") {
					t.Errorf("text has %q", s)
				}
			}
		}},
		{"cronjob", Key{Kind: "CronJob", Group: "batch"}, cron, func(t *testing.T, f *docFields) {
			check(t, "images", []string{"busybox:1.36"}, f.images)
		}},
		{"deployment", Key{Kind: "Deployment", Group: "apps"}, deploy, func(t *testing.T, f *docFields) {
			check(t, "images", []string{"nginx:1.19", "quay.io/org/migrate:v2"}, f.images)
			check(t, "conditions", []string{"Available=True", "Progressing=True"}, f.conditions)
		}},
		{"node", nodeKey, node, func(t *testing.T, f *docFields) {
			check(t, "node", "node-a", f.node)
		}},
		{"secret", secretKey, secret, func(t *testing.T, f *docFields) {
			for _, s := range f.text {
				if strings.Contains(s, "hunter2") || strings.Contains(s, "aHVudGVyMg") {
					t.Errorf("text has secret data %q", s)
				}
			}
		}},
		{"a secret-like object of another group keeps its data", Key{Group: "example.com", Kind: "Secret"},
			map[string]interface{}{"data": map[string]interface{}{"x": "visible"}}, func(t *testing.T, f *docFields) {
				check(t, "text", []string{"Secret", "visible"}, f.text)
			}},
		{"nil object", podKey("m", "ns", "p"), nil, func(t *testing.T, f *docFields) {
			check(t, "text", []string{"p", "ns", "Pod"}, f.text)
		}},
		{"malformed object", podKey("m", "ns", "p"), map[string]interface{}{
			"metadata": "x",
			"spec":     map[string]interface{}{"containers": "x", "nodeName": int64(3)},
			"status":   map[string]interface{}{"conditions": []interface{}{"x", map[string]interface{}{"status": "True"}}, "phase": 1},
		}, func(t *testing.T, f *docFields) {
			check(t, "images", []string(nil), f.images)
			check(t, "conditions", []string(nil), f.conditions)
		}},
		{"bounded text", podKey("m", "ns", "p"), map[string]interface{}{
			"data": map[string]interface{}{"a": strings.Repeat("x", 3*maxLeafBytes), "b": strings.Repeat("é", maxTextBytes)},
			"more": []interface{}{strings.Repeat("y", maxTextBytes)},
		}, func(t *testing.T, f *docFields) {
			n := 0
			for _, s := range f.text {
				if len(s) > maxLeafBytes || !utf8Valid(s) {
					t.Errorf("text value of %d bytes (valid UTF-8: %v)", len(s), utf8Valid(s))
				}
				n += len(s)
			}
			if n > maxTextBytes {
				t.Errorf("text of %d bytes, want at most %d", n, maxTextBytes)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.want(t, extract(tc.key, tc.obj))
		})
	}
}

// check compares a field, ignoring the order of slices.
func check[T any](t *testing.T, what string, want, got T) {
	t.Helper()
	opts := cmp.Options{
		cmpopts.SortSlices(func(a, b string) bool { return a < b }),
		cmpopts.SortSlices(func(a, b keyValue) bool { return a.key < b.key }),
		cmp.AllowUnexported(keyValue{}),
		cmpopts.EquateEmpty(),
	}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// fixtureByName returns the fixture object named name.
func fixtureByName(t *testing.T, name string) (Key, map[string]interface{}) {
	t.Helper()
	for _, o := range fixture() {
		if o.key.Name == name && o.key.Cluster == "member1" {
			return o.key, o.obj
		}
	}
	t.Fatalf("no fixture object %q", name)
	return Key{}, nil
}

func TestLargeObject(t *testing.T) {
	ix := openTest(t, Options{})
	k := Key{Cluster: "m", Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespace: "ns", Name: "big"}
	labels := map[string]interface{}{"huge": strings.Repeat("v", 10000)}
	ix.Put(k, map[string]interface{}{
		"metadata": map[string]interface{}{"name": "big", "labels": labels,
			"annotations": map[string]interface{}{"blob": strings.Repeat("a", 1<<20)}},
		"data": map[string]interface{}{"file": strings.Repeat("word ", 1<<18) + " needle"},
	})
	mustFlush(t, ix)
	if s := ix.Stats(); s.Errors != 0 || s.DocCount != 1 {
		t.Fatalf("Stats = %+v", s)
	}
	for q, want := range map[string]uint64{"word": 1, "label:huge=vvv*": 1, "annotation:blob=aaa*": 1, "needle": 0} {
		if r := doSearch(t, ix, Request{Query: q}); r.Total != want {
			t.Errorf("Search(%q).Total = %d, want %d", q, r.Total, want)
		}
	}
}
