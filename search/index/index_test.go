package index

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSearchFields(t *testing.T) {
	ix, _ := loadFixture(t)
	const (
		web1   = "member1/default/web-1"
		web2   = "member1/default/web-2"
		db1    = "member1/data/db-1"
		m2web1 = "member2/default/web-1"
		api1   = "member2/prod/api-1"
		deploy = "member1/default/web"
		cron   = "member1/data/backup"
		node   = "member1//node-a"
		secret = "member1/default/creds"
		cm     = "member2/prod/settings"
	)
	pods := []string{web1, web2, db1, m2web1, api1}
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"cluster", "cluster:member2", []string{m2web1, api1, cm}},
		{"cluster upper case", "cluster:MEMBER2", []string{m2web1, api1, cm}},
		{"group", "group:apps", []string{deploy}},
		{"core group", "group:core kind:Pod", pods},
		{"version", "version:v1 -group:core", []string{deploy, cron}},
		{"resource", "resource:cronjobs", []string{cron}},
		{"kind lower", "kind:pod", pods},
		{"kind upper", "kind:Pod", pods},
		{"field name case", "KIND:pod", pods},
		{"namespace", "namespace:data", []string{db1, cron}},
		{"name", "name:web-1", []string{web1, m2web1}},
		{"name wildcard", "name:web*", []string{web1, web2, m2web1, deploy}},
		{"apiVersion", "apiVersion:apps/v1", []string{deploy}},
		{"apiVersion core", "apiversion:v1 kind:Node", []string{node}},
		{"label", "label:app=web", []string{web1, web2, m2web1, deploy}},
		{"label alias", "labels:tier=backend", []string{db1, api1}},
		{"label key exists", "label:tier=*", []string{db1, api1}},
		{"per-key label", "labels.app:web", []string{web1, web2, m2web1, deploy}},
		{"per-key label alias", "label.app:db", []string{db1}},
		{"label with empty value", "label:empty=", []string{db1}},
		{"per-key label with empty value", "labels.empty:*", nil},
		{"per-key label with slash", "labels.kubernetes.io/hostname:node-a", []string{node}},
		{"annotation", "annotation:team=payments", []string{cm}},
		{"per-key annotation", "annotations.team:Payments", []string{cm}},
		{"last-applied annotation skipped", "annotation:kubectl.kubernetes.io*", nil},
		{"image repository", "image:nginx", []string{web1, web2, m2web1, deploy}},
		{"image prefix", "image:nginx*", []string{web1, web2, m2web1, deploy}},
		{"image quoted tag", `image:"nginx:1.19"`, []string{web1, m2web1, deploy}},
		{"image escaped tag", `image:nginx\:1.21`, []string{web2}},
		{"image full reference", `image:"docker.io/library/nginx:1.21"`, []string{web2}},
		{"image path suffix", "image:library/nginx*", []string{web2}},
		{"image registry prefix", "image:docker.io/*", []string{web2}},
		{"image digest", "image:api", []string{api1}},
		{"image with digest", `image:"acme/api@sha256:abcdef"`, []string{api1}},
		{"image of init container", "image:migrate", []string{deploy}},
		{"image of cronjob", "image:busybox*", []string{cron}},
		{"node of pods and node", "node:node-a", []string{web1, node}},
		{"node", "node:node-b", []string{web2, db1}},
		{"phase", "phase:Pending", []string{db1}},
		{"phase lower", "phase:succeeded", []string{api1}},
		{"condition", "condition:Ready=False", []string{web2, db1}},
		{"condition deployment", "condition:available=true", []string{deploy}},
		{"condition wildcard", "condition:memorypressure=*", []string{node}},
		{"condition regexp", "condition:/(available|memorypressure)=.*/", []string{deploy, node}},
		{"kind regexp", "kind:/(node|cronjob)/", []string{cron, node}},
		{"text word", "pg_dump", []string{cron}},
		{"text field", "text:eu", []string{cm}},
		{"text split word", "eu-west", []string{cm}},
		{"text split word needs all its words", "eu-east", nil},
		{"text quoted words", `"successfully progressed"`, []string{deploy}},
		{"text quoted words in any order", `"progressed successfully"`, []string{deploy}},
		{"text has the kind", "cronjob", []string{cron}},
		{"text has the namespace", "text:prod", []string{api1, cm}},
		{"secret data not indexed", "hunter2", nil},
		{"secret base64 not indexed", "aHVudGVyMg", nil},
		{"configmap binaryData not indexed", "YmluYXJ5b25seQ", nil},
		{"last-applied not indexed", "lastappliedonly", nil},
		{"managedFields not indexed", "managedfieldsonly", nil},
		{"and", "kind:Pod cluster:member1 namespace:default", []string{web1, web2}},
		{"and with text", "nginx phase:running cluster:member2", []string{m2web1}},
		{"required", "+kind:Pod +phase:Running", []string{web1, web2, m2web1}},
		{"exclude", "kind:Pod -cluster:member1", []string{m2web1, api1}},
		{"only exclusions", "-kind:Pod -cluster:member2", []string{deploy, cron, node, secret}},
		{"no match", "kind:Pod phase:Failed", nil},
		{"unknown value", "cluster:member9", nil},
		{"number value", "name:15", nil},
		{"stop word alone", "the", nil},
		{"fuzzy text", "busybax~1", []string{cron}},
		{"boost", "kind:Pod^2 cluster:member2", []string{m2web1, api1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := doSearch(t, ix, Request{Query: tc.query, Size: 100})
			got := names(r.Hits)
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Search(%q) hits (-want +got):\n%s", tc.query, diff)
			}
			if r.Total != uint64(len(tc.want)) {
				t.Errorf("Search(%q).Total = %d, want %d", tc.query, r.Total, len(tc.want))
			}
		})
	}
}

func TestSearchAll(t *testing.T) {
	ix, objs := loadFixture(t)
	want := sortedIDs(objs, func(Key) bool { return true })
	for _, q := range []string{"", "*", "  ", " * "} {
		r := doSearch(t, ix, Request{Query: q})
		// Every hit scores the same, so hits are in id order.
		if diff := cmp.Diff(want, ids(r.Hits)); diff != "" {
			t.Errorf("Search(%q) ids (-want +got):\n%s", q, diff)
		}
	}
}

func TestSearchHitKeys(t *testing.T) {
	ix, objs := loadFixture(t)
	r := doSearch(t, ix, Request{Query: "*"})
	want := make(map[string]Key)
	for _, o := range objs {
		want[o.key.ID()] = o.key
	}
	for _, k := range r.Hits {
		if diff := cmp.Diff(want[k.ID()], k); diff != "" {
			t.Errorf("hit %s (-want +got):\n%s", k.ID(), diff)
		}
	}
}

func TestSearchFacets(t *testing.T) {
	ix, objs := loadFixture(t)
	tests := []struct {
		name   string
		req    Request
		filter func(Key) bool
	}{
		{"all", Request{}, func(Key) bool { return true }},
		{"pods", Request{Query: "kind:Pod"}, func(k Key) bool { return k.Kind == "Pod" }},
		{"page smaller than matches", Request{Query: "kind:Pod", Size: 1}, func(k Key) bool { return k.Kind == "Pod" }},
		{"scoped", Request{Scopes: []Scope{{Cluster: "member2", Resource: "pods"}, {Cluster: "member1", Resource: "pods", Namespaces: []string{"data"}}}},
			func(k Key) bool { return k.Resource == "pods" && (k.Cluster == "member2" || k.Namespace == "data") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string][]FacetCount{FacetCluster: {}, FacetKind: {}, FacetNamespace: {}}
			counts := map[string]map[string]int{FacetCluster: {}, FacetKind: {}, FacetNamespace: {}}
			total := 0
			for _, o := range objs {
				if !tc.filter(o.key) {
					continue
				}
				total++
				counts[FacetCluster][o.key.Cluster]++
				counts[FacetKind][o.key.Kind]++
				if o.key.Namespace != "" {
					counts[FacetNamespace][o.key.Namespace]++
				}
			}
			for facet, m := range counts {
				for term, n := range m {
					want[facet] = append(want[facet], FacetCount{term, n})
				}
				slices.SortFunc(want[facet], func(a, b FacetCount) int {
					if a.Count != b.Count {
						return b.Count - a.Count
					}
					return cmpString(a.Term, b.Term)
				})
			}
			r := doSearch(t, ix, tc.req)
			if r.Total != uint64(total) {
				t.Errorf("Total = %d, want %d", r.Total, total)
			}
			if diff := cmp.Diff(want, r.Facets); diff != "" {
				t.Errorf("Facets (-want +got):\n%s", diff)
			}
		})
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestSearchFacetSize(t *testing.T) {
	ix := openTest(t, Options{})
	// Namespace ns-i holds i+1 pods.
	for i := range 5 {
		for j := 0; j <= i; j++ {
			ix.Put(podKey("member1", "ns-"+strconv.Itoa(i), "p"+strconv.Itoa(j)), nil)
		}
	}
	mustFlush(t, ix)
	r := doSearch(t, ix, Request{FacetSize: 2})
	want := []FacetCount{{"ns-4", 5}, {"ns-3", 4}}
	if diff := cmp.Diff(want, r.Facets[FacetNamespace]); diff != "" {
		t.Errorf("namespace facet (-want +got):\n%s", diff)
	}
}

func TestSearchPaging(t *testing.T) {
	ix := openTest(t, Options{BatchSize: 7})
	const n = 57
	for i := range n {
		k, o := kwokPod("member"+strconv.Itoa(i%2+1), i)
		ix.Put(k, o)
	}
	mustFlush(t, ix)
	for _, q := range []string{"kind:Pod", "nginx", "redis pause", "phase:running"} {
		t.Run(q, func(t *testing.T) {
			full := doSearch(t, ix, Request{Query: q, Size: 1000})
			if len(full.Hits) != int(full.Total) {
				t.Fatalf("one page of 1000: %d hits, total %d", len(full.Hits), full.Total)
			}
			if full.Total == 0 {
				t.Fatalf("no hits")
			}
			var paged []Key
			for from := 0; from < int(full.Total)+10; from += 10 {
				r := doSearch(t, ix, Request{Query: q, From: from, Size: 10})
				if r.Total != full.Total {
					t.Errorf("page at %d: Total = %d, want %d", from, r.Total, full.Total)
				}
				paged = append(paged, r.Hits...)
			}
			if diff := cmp.Diff(ids(full.Hits), ids(paged)); diff != "" {
				t.Errorf("pages of 10 differ from one page (-one +pages):\n%s", diff)
			}
			again := doSearch(t, ix, Request{Query: q, Size: 1000})
			if diff := cmp.Diff(ids(full.Hits), ids(again.Hits)); diff != "" {
				t.Errorf("order changed between searches (-first +second):\n%s", diff)
			}
		})
	}
	t.Run("default and maximum size", func(t *testing.T) {
		if r := doSearch(t, ix, Request{}); len(r.Hits) != min(n, defaultSize) {
			t.Errorf("Size 0: %d hits, want %d", len(r.Hits), min(n, defaultSize))
		}
		if r := doSearch(t, ix, Request{From: n - 3}); len(r.Hits) != 3 {
			t.Errorf("last page: %d hits, want 3", len(r.Hits))
		}
		if r := doSearch(t, ix, Request{From: n + 5}); len(r.Hits) != 0 || r.Total != n {
			t.Errorf("past the end: %d hits, total %d; want 0, %d", len(r.Hits), r.Total, n)
		}
		if r := doSearch(t, ix, Request{From: math.MaxInt, Size: maxSize}); len(r.Hits) != 0 || r.Total != n {
			t.Errorf("From MaxInt: %d hits, total %d; want 0, %d", len(r.Hits), r.Total, n)
		}
		if r := doSearch(t, ix, Request{From: -4, Size: 2}); len(r.Hits) != 2 {
			t.Errorf("negative From: %d hits, want 2", len(r.Hits))
		}
	})
}

func TestSearchMaxSize(t *testing.T) {
	ix := openTest(t, Options{})
	for i := range maxSize + 20 {
		ix.Put(podKey("member1", "default", "p"+strconv.Itoa(i)), nil)
	}
	mustFlush(t, ix)
	r := doSearch(t, ix, Request{Size: maxSize * 5})
	if len(r.Hits) != maxSize || r.Total != maxSize+20 {
		t.Errorf("Size %d: %d hits, total %d; want %d, %d", maxSize*5, len(r.Hits), r.Total, maxSize, maxSize+20)
	}
}

func TestSearchScopes(t *testing.T) {
	ix, objs := loadFixture(t)
	tests := []struct {
		name   string
		query  string
		scopes []Scope
		match  func(Key) bool
	}{
		{"nil scopes", "", nil, func(Key) bool { return true }},
		{"empty scopes", "", []Scope{}, func(Key) bool { return false }},
		{"empty scopes with query", "kind:Pod", []Scope{}, func(Key) bool { return false }},
		{"cluster and resource", "", []Scope{{Cluster: "member1", Resource: "pods"}},
			func(k Key) bool { return k.Cluster == "member1" && k.Resource == "pods" }},
		{"group matters", "", []Scope{{Cluster: "member1", Group: "apps", Resource: "deployments"}},
			func(k Key) bool { return k.Resource == "deployments" }},
		{"wrong group", "", []Scope{{Cluster: "member1", Resource: "deployments"}}, func(Key) bool { return false }},
		{"namespaces", "", []Scope{{Cluster: "member1", Resource: "pods", Namespaces: []string{"data", "nope"}}},
			func(k Key) bool { return k.Cluster == "member1" && k.Resource == "pods" && k.Namespace == "data" }},
		{"empty namespaces", "", []Scope{{Cluster: "member1", Resource: "pods", Namespaces: []string{}}},
			func(Key) bool { return false }},
		{"cluster-scoped with namespaces", "", []Scope{{Cluster: "member1", Resource: "nodes", Namespaces: []string{"default"}}},
			func(Key) bool { return false }},
		{"cluster-scoped", "", []Scope{{Cluster: "member1", Resource: "nodes"}},
			func(k Key) bool { return k.Kind == "Node" }},
		{"several scopes", "", []Scope{{Cluster: "member2", Resource: "pods"}, {Cluster: "member1", Resource: "secrets"}},
			func(k Key) bool { return k.Cluster == "member2" && k.Kind == "Pod" || k.Kind == "Secret" }},
		{"scope and label", "label:app=web", []Scope{{Cluster: "member2", Resource: "pods"}, {Cluster: "member1", Group: "apps", Resource: "deployments"}},
			func(k Key) bool { return k.Name == "web" || k.Cluster == "member2" && k.Name == "web-1" }},
		{"scope and exclusion", "-name:web-1", []Scope{{Cluster: "member2", Resource: "pods"}},
			func(k Key) bool { return k.Cluster == "member2" && k.Name == "api-1" }},
		{"scope and stop word", "the", []Scope{{Cluster: "member2", Resource: "pods"}}, func(Key) bool { return false }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := doSearch(t, ix, Request{Query: tc.query, Scopes: tc.scopes, Size: 100})
			want := sortedIDs(objs, tc.match)
			got := ids(r.Hits)
			slices.Sort(got)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
			if r.Total != uint64(len(want)) {
				t.Errorf("Total = %d, want %d", r.Total, len(want))
			}
			sum := 0
			for _, c := range r.Facets[FacetCluster] {
				sum += c.Count
			}
			if sum != len(want) {
				t.Errorf("cluster facet counts %d documents, want %d", sum, len(want))
			}
			for _, f := range []string{FacetCluster, FacetKind, FacetNamespace} {
				if r.Facets[f] == nil {
					t.Errorf("facet %q is nil", f)
				}
			}
		})
	}
}

func TestKeyID(t *testing.T) {
	keys := []Key{
		{},
		{Cluster: "a"},
		{Name: "a"},
		{Cluster: "a", Group: "b"},
		{Cluster: "a/b"},
		{Cluster: "a", Group: "", Resource: "b"},
		{Cluster: "m", Resource: "pods", Namespace: "ns", Name: "x"},
		{Cluster: "m", Resource: "pods", Name: "ns/x"},
		{Cluster: "m", Resource: "pods", Name: "ns%2Fx"},
		{Cluster: "m", Resource: "pods", Namespace: "ns%", Name: "x"},
	}
	seen := map[string]Key{}
	for _, k := range keys {
		id := k.ID()
		if other, ok := seen[id]; ok {
			t.Errorf("%+v and %+v have the same id %q", k, other, id)
		}
		seen[id] = k
		parts, ok := splitID(id, 5)
		want := []string{k.Cluster, k.Group, k.Resource, k.Namespace, k.Name}
		if !ok || !slices.Equal(parts, want) {
			t.Errorf("splitID(%q) = %q, %v; want %q", id, parts, ok, want)
		}
	}
	// Version and kind are not part of the id.
	a := Key{Cluster: "m", Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Name: "x"}
	b := a
	b.Version = "v1beta1"
	if a.ID() != b.ID() {
		t.Errorf("ids differ by version: %q, %q", a.ID(), b.ID())
	}
}

// TestKeywordsKeepTextOrder checks that keyword clauses and scopes restrict a
// text query without reordering its hits: keyword terms score zero.
func TestKeywordsKeepTextOrder(t *testing.T) {
	ix := openTest(t, Options{})
	for i := range 40 {
		k, o := kwokPod("member"+strconv.Itoa(i%2+1), i)
		if i%4 == 0 {
			// Some pods mention redis more often, to spread the scores.
			o["spec"].(map[string]interface{})["hostname"] = "redis redis redis"
		}
		ix.Put(k, o)
	}
	mustFlush(t, ix)
	base := doSearch(t, ix, Request{Query: "redis", Size: 100})
	if base.Total == 0 {
		t.Fatal("no hits")
	}
	scopes := []Scope{{Cluster: "member1", Resource: "pods"}, {Cluster: "member2", Resource: "pods"}}
	for _, req := range []Request{
		{Query: "redis kind:Pod", Size: 100},
		{Query: "redis -kind:Node cluster:member*", Size: 100},
		{Query: "redis", Scopes: scopes, Size: 100},
		{Query: "+redis +image:pause", Scopes: scopes, Size: 100},
	} {
		r := doSearch(t, ix, req)
		if diff := cmp.Diff(ids(base.Hits), ids(r.Hits)); diff != "" {
			t.Errorf("Search(%q, scopes %v) order differs from %q (-want +got):\n%s", req.Query, req.Scopes != nil, "redis", diff)
		}
	}
	// The hits are not simply in id order, or the test would prove nothing.
	if slices.IsSorted(ids(base.Hits)) {
		t.Errorf("hits of %q are in id order: scores do not differ", "redis")
	}
}
