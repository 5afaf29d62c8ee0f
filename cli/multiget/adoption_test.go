package multiget

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// TestMarkTakenOver: a member row without the control plane's labels shows
// Y when a template of its name has a binding reporting it applied in
// that cluster; the lookups are one template list per resource and one
// binding read per template, only for rows that would show N.
func TestMarkTakenOver(t *testing.T) {
	t.Parallel()
	decode := func(rows ...row) *metav1.Table {
		table, err := DecodeTable(serverTable(t, deploymentColumns, rows...), time.Now(), false)
		if err != nil {
			t.Fatal(err)
		}
		return table
	}
	cells := []interface{}{"1/1", "5m", "nginx"}
	for _, tc := range []struct {
		name      string
		templates map[string][]string // namespace listed -> template keys
		applied   map[string][]string // template key -> clusters applied
		failList  bool
		want      []string
		wantReads []string // the bindings read
		wantLists []string // the namespaces listed
	}{
		{
			name:      "promoted in member1: Y there only; member2's namesake is not applied",
			templates: map[string][]string{"ns": {"ns/promoted", "ns/other"}},
			applied:   map[string][]string{"ns/promoted": {"member1"}},
			want:      []string{"labelled@member1=Y", "promoted@member1=Y", "local@member1=N", "promoted@member2=N"},
			wantReads: []string{"Deployment ns/promoted"},
			wantLists: []string{"ns"},
		},
		{
			name:      "no template of that name: no binding read",
			templates: map[string][]string{"ns": {"ns/other"}},
			want:      []string{"labelled@member1=Y", "promoted@member1=N", "local@member1=N", "promoted@member2=N"},
			wantLists: []string{"ns"},
		},
		{
			name:      "templates cannot be listed (forbidden): labels only",
			failList:  true,
			want:      []string{"labelled@member1=Y", "promoted@member1=N", "local@member1=N", "promoted@member2=N"},
			wantLists: []string{"ns"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var lists, reads []string
			l := adoptionLookup{
				templates: func(_ context.Context, gvr schema.GroupVersionResource, namespace string, want sets.Set[string]) (sets.Set[string], error) {
					lists = append(lists, namespace)
					if !want.Equal(sets.New("ns/promoted", "ns/local")) {
						t.Errorf("templates asked for %v, want the rows that show N", sets.List(want))
					}
					if gvr != deployments.Resource {
						t.Errorf("templates of %v listed", gvr)
					}
					if tc.failList {
						return nil, errors.New("forbidden")
					}
					return sets.New(tc.templates[namespace]...), nil
				},
				appliedIn: func(_ context.Context, gvk schema.GroupVersionKind, namespace, name string) (sets.Set[string], error) {
					reads = append(reads, gvk.Kind+" "+namespace+"/"+name)
					return sets.New(tc.applied[namespace+"/"+name]...), nil
				},
			}
			parts := []Part{
				{Cluster: ControlPlaneName, ControlPlane: true, Mapping: deployments, Table: decode(row{namespace: "ns", name: "promoted", cells: cells})},
				{Cluster: "member1", Mapping: deployments, Table: decode(
					row{namespace: "ns", name: "labelled", labels: managed, cells: cells},
					row{namespace: "ns", name: "promoted", cells: cells},
					row{namespace: "ns", name: "local", cells: cells})},
				{Cluster: "member2", Mapping: deployments, Table: decode(row{namespace: "ns", name: "promoted", cells: cells})},
			}
			l.markTakenOver(t.Context(), parts)
			var got []string
			for _, m := range Merge(parts) {
				for _, r := range m.Table.Rows {
					if r.Cells[1] == ControlPlaneName {
						continue
					}
					got = append(got, r.Cells[0].(string)+"@"+r.Cells[1].(string)+"="+r.Cells[len(r.Cells)-2].(string))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReads, reads); diff != "" {
				t.Errorf("bindings read (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLists, lists); diff != "" {
				t.Errorf("template lists (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMarkTakenOverBounded: at most maxBindingReads bindings are read.
func TestMarkTakenOverBounded(t *testing.T) {
	t.Parallel()
	var rows []row
	keys := sets.New[string]()
	for i := range maxBindingReads + 10 {
		name := "d" + strings.Repeat("x", i)
		rows = append(rows, row{namespace: "ns", name: name, cells: []interface{}{"1/1", "5m", "nginx"}})
		keys.Insert("ns/" + name)
	}
	table, err := DecodeTable(serverTable(t, deploymentColumns, rows...), time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	l := adoptionLookup{
		templates: func(context.Context, schema.GroupVersionResource, string, sets.Set[string]) (sets.Set[string], error) {
			return keys, nil
		},
		appliedIn: func(context.Context, schema.GroupVersionKind, string, string) (sets.Set[string], error) {
			reads++
			return sets.New("member1"), nil
		},
	}
	parts := []Part{{Cluster: "member1", Mapping: deployments, Table: table}}
	l.markTakenOver(t.Context(), parts)
	if reads != maxBindingReads || parts[0].TakenOver.Len() != maxBindingReads {
		t.Errorf("%d bindings read, %d rows taken over; want %d each", reads, parts[0].TakenOver.Len(), maxBindingReads)
	}
}

func TestAppliedClusters(t *testing.T) {
	t.Parallel()
	spec := workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}}}
	status := workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "member1", Applied: true},
		{ClusterName: "member2", Applied: false}, // Abort: left alone
		{ClusterName: "member3", Applied: true},  // no longer targeted
	}}
	if got := sets.List(appliedClusters(spec, status)); !cmp.Equal(got, []string{"member1"}) {
		t.Errorf("applied clusters %v, want [member1]", got)
	}
}
