package inventory

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestDecisions(t *testing.T) {
	t.Parallel()
	many := make([]workv1alpha2.TargetCluster, 250)
	for i := range many {
		many[i] = workv1alpha2.TargetCluster{Name: fmt.Sprintf("m%03d", 249-i)}
	}
	all := func(string) bool { return true }
	tests := []struct {
		name       string
		p          Placement
		exists     func(string) bool
		wantSlices []string   // names
		wantRefs   [][]string // cluster names per slice
		wantReason string     // of the first decision
	}{{
		name: "sorted, a deleted cluster left out",
		p: Placement{Kind: "ResourceBinding", Namespace: "default", Name: "nginx-deployment", PermanentID: "0b7f0f5c-1111-4a3e-9f00-2c4c6a1b2d3e", SchedulerName: "default-scheduler",
			Clusters: []workv1alpha2.TargetCluster{{Name: "member3", Replicas: 1}, {Name: "gone", Replicas: 1}, {Name: "member1", Replicas: 2}}},
		exists:     func(c string) bool { return c != "gone" },
		wantSlices: []string{"nginx-deployment-0"},
		wantRefs:   [][]string{{"member1", "member3"}},
		wantReason: "Scheduled by Flotilla with 2 replicas",
	}, {
		name:       "nothing placed: one empty slice",
		p:          Placement{Kind: "ClusterResourceBinding", Name: "ns-a-namespace", PermanentID: "id"},
		exists:     all,
		wantSlices: []string{"ns-a-namespace-0"},
		wantRefs:   [][]string{{}},
	}, {
		name:       "250 clusters: three slices of at most 100",
		p:          Placement{Kind: "ResourceBinding", Namespace: "default", Name: "big", PermanentID: "id", Clusters: many},
		exists:     all,
		wantSlices: []string{"big-0", "big-1", "big-2"},
		wantRefs:   [][]string{names("m%03d", 0, 100), names("m%03d", 100, 200), names("m%03d", 200, 250)},
		wantReason: "Scheduled by Flotilla",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Decisions(tt.p, "ns", "flotilla-inventory", tt.exists)
			if len(got) != len(tt.wantSlices) {
				t.Fatalf("%d slices, want %d", len(got), len(tt.wantSlices))
			}
			for i, d := range got {
				if d.GetName() != tt.wantSlices[i] || d.GetNamespace() != "ns" {
					t.Errorf("slice %d is %s/%s, want ns/%s", i, d.GetNamespace(), d.GetName(), tt.wantSlices[i])
				}
				labels := d.GetLabels()
				if labels[multiclusterv1alpha1.LabelDecisionKey] != DecisionKey(tt.p) || labels[multiclusterv1alpha1.LabelDecisionIndex] != fmt.Sprint(i) ||
					labels[multiclusterv1alpha1.LabelClusterManager] != Manager {
					t.Errorf("slice %d labels %v", i, labels)
				}
				refs, reasons := refsOf(t, d)
				if strings.Join(refs, ",") != strings.Join(tt.wantRefs[i], ",") {
					t.Errorf("slice %d refers to %v, want %v", i, refs, tt.wantRefs[i])
				}
				if i == 0 && len(reasons) > 0 && reasons[0] != tt.wantReason {
					t.Errorf("reason %q, want %q", reasons[0], tt.wantReason)
				}
				if d.Object["schedulerName"] != nil && d.Object["schedulerName"] != tt.p.SchedulerName {
					t.Errorf("schedulerName %v", d.Object["schedulerName"])
				}
			}
		})
	}
}

func TestDecisionKeyAndSliceName(t *testing.T) {
	t.Parallel()
	p := Placement{Kind: "ResourceBinding", Namespace: "default", Name: "web"}
	if k := DecisionKey(p); k == "" || k != DecisionKey(p) || k == DecisionKey(Placement{Kind: "ResourceBinding", Namespace: "other", Name: "web"}) {
		t.Errorf("a binding without a permanent id: key %q is not stable and distinct", k)
	}
	p.PermanentID = "0b7f0f5c-1111-4a3e-9f00-2c4c6a1b2d3e"
	if DecisionKey(p) != p.PermanentID {
		t.Errorf("key %q, want the permanent id", DecisionKey(p))
	}
	long := strings.Repeat("a", 253)
	a, b := SliceName(long, 0), SliceName(long, 1)
	if len(a) > 253 || len(b) > 253 || a == b || !strings.HasSuffix(b, "-1") {
		t.Errorf("slice names of a long binding: %q (%d), %q (%d)", a, len(a), b, len(b))
	}
}

func names(format string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}

func refsOf(t *testing.T, d *unstructured.Unstructured) (refs, reasons []string) {
	t.Helper()
	list, ok := d.Object["decisions"].([]any)
	if !ok {
		t.Fatalf("decisions is %T", d.Object["decisions"])
	}
	refs = []string{}
	for _, item := range list {
		m := item.(map[string]any)
		ref := m["clusterProfileRef"].(map[string]any)
		if ref["namespace"] != "flotilla-inventory" {
			t.Errorf("profile namespace %v", ref["namespace"])
		}
		refs = append(refs, ref["name"].(string))
		reasons = append(reasons, m["reason"].(string))
	}
	return refs, reasons
}
