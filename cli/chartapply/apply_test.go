package chartapply

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func ref(kind, name string) Ref { return Ref{APIVersion: "v1", Kind: kind, Name: name} }

func TestStale(t *testing.T) {
	for _, tc := range []struct {
		name         string
		old, applied []Ref
		want         []Ref
	}{
		{name: "nothing before", applied: []Ref{ref("Secret", "a")}},
		{name: "same objects", old: []Ref{ref("Secret", "a")}, applied: []Ref{ref("Secret", "a")}},
		{name: "dropped object", old: []Ref{ref("Secret", "a"), ref("StatefulSet", "etcd")}, applied: []Ref{ref("Secret", "a")}, want: []Ref{ref("StatefulSet", "etcd")}},
		{name: "uid does not matter", old: []Ref{{APIVersion: "v1", Kind: "Secret", Name: "a", UID: "1"}}, applied: []Ref{{APIVersion: "v1", Kind: "Secret", Name: "a", UID: "2"}}},
		{name: "same name, other namespace", old: []Ref{{APIVersion: "v1", Kind: "Secret", Namespace: "x", Name: "a"}}, applied: []Ref{ref("Secret", "a")},
			want: []Ref{{APIVersion: "v1", Kind: "Secret", Namespace: "x", Name: "a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stale(tc.old, tc.applied); !slices.Equal(got, tc.want) {
				t.Errorf("stale = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUninstallOrder(t *testing.T) {
	in := []Ref{ref("Namespace", "ns"), ref("ServiceAccount", "sa"), ref("Secret", "cert"), ref("ClusterRole", "r"),
		ref("Service", "svc"), ref("Deployment", "d"), ref("APIService", "v1.a"), ref("APIService", "v1.b"), ref("Certificate", "c")}
	got := uninstallOrder(in)
	pos := func(kind, name string) int { return slices.Index(got, ref(kind, name)) }
	for _, before := range [][2]Ref{
		{ref("APIService", "v1.a"), ref("Service", "svc")},
		{ref("Deployment", "d"), ref("Secret", "cert")},
		{ref("Deployment", "d"), ref("ServiceAccount", "sa")},
		{ref("Secret", "cert"), ref("Namespace", "ns")},
		{ref("Certificate", "c"), ref("Secret", "cert")},       // unknown kinds first
		{ref("APIService", "v1.b"), ref("APIService", "v1.a")}, // reverse of install within a kind
	} {
		if pos(before[0].Kind, before[0].Name) > pos(before[1].Kind, before[1].Name) {
			t.Errorf("%s deleted after %s: %v", before[0], before[1], got)
		}
	}
	if len(got) != len(in) {
		t.Errorf("%d refs, want %d", len(got), len(in))
	}
}

func TestAvailable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		conds   []apiregv1.APIServiceCondition
		want    bool
		wantWhy string
	}{
		{name: "no condition", wantWhy: "no Available condition yet"},
		{name: "available", conds: []apiregv1.APIServiceCondition{{Type: apiregv1.Available, Status: apiregv1.ConditionTrue}}, want: true},
		{name: "missing endpoints", conds: []apiregv1.APIServiceCondition{{Type: apiregv1.Available, Status: apiregv1.ConditionFalse, Reason: "MissingEndpoints", Message: "no addresses"}},
			wantWhy: "MissingEndpoints: no addresses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, ok := available(&apiregv1.APIService{Status: apiregv1.APIServiceStatus{Conditions: tc.conds}})
			if ok != tc.want || why != tc.wantWhy {
				t.Errorf("available = %q, %v; want %q, %v", why, ok, tc.wantWhy, tc.want)
			}
		})
	}
}

func TestInventoryRoundTrip(t *testing.T) {
	inv := &Inventory{CreatedNamespace: true, Objects: []Ref{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "d", UID: "u1"}}}
	cm, err := inv.configMap("rel", "ns", map[string]string{"a": "b"})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "rel-flotillactl-init" || cm.Namespace != "ns" || cm.Labels["a"] != "b" {
		t.Errorf("configmap %s/%s labels %v", cm.Namespace, cm.Name, cm.Labels)
	}
	got, err := decodeInventory(cm)
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedNamespace || !slices.Equal(got.Objects, inv.Objects) {
		t.Errorf("decoded %+v, want %+v", got, inv)
	}
	if _, err := decodeInventory(&corev1.ConfigMap{Data: map[string]string{InventoryKey: "{"}}); err == nil {
		t.Error("a broken inventory decodes")
	}
}
