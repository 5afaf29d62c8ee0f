package multiget

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

var (
	deployments = &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Scope:            meta.RESTScopeNamespace,
	}
	pods = &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Scope:            meta.RESTScopeNamespace,
	}
	deploymentColumns = []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"},
		{Name: "Ready", Type: "string"},
		{Name: "Age", Type: "string"},
		{Name: "Images", Type: "string", Priority: 1},
	}
	podColumns = []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"},
		{Name: "Status", Type: "string"},
		{Name: "Node", Type: "string", Priority: 1},
	}
)

// row is one object of a server table: its namespace, name, labels and
// cells after the name.
type row struct {
	namespace, name string
	labels          map[string]string
	cells           []interface{}
}

// serverTable is a table as a server answers as=Table with the default
// includeObject=Metadata, decoded the way the resource builder decodes it.
func serverTable(t *testing.T, columns []metav1.TableColumnDefinition, rows ...row) *unstructured.Unstructured {
	t.Helper()
	table := metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"}, ColumnDefinitions: columns}
	table.ResourceVersion = "42"
	for _, r := range rows {
		m := metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
			ObjectMeta: metav1.ObjectMeta{Namespace: r.namespace, Name: r.name, Labels: r.labels, ResourceVersion: "7"}}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: append([]interface{}{r.name}, r.cells...), Object: runtime.RawExtension{Raw: raw}})
	}
	raw, err := json.Marshal(table)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return u
}

var managed = map[string]string{"karmada.io/managed": "true", "app": "web"}

func TestAdoption(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		labels       map[string]string
		controlPlane bool
		want         string
	}{
		{managed, false, Adopted},
		{map[string]string{"karmada.io/managed": "false"}, false, NotAdopted},
		{nil, false, NotAdopted},
		{managed, true, NoAdoption},
		{nil, true, NoAdoption},
	} {
		if got := Adoption(tc.labels, tc.controlPlane, false); got != tc.want {
			t.Errorf("Adoption(%v, controlPlane=%v) = %q, want %q", tc.labels, tc.controlPlane, got, tc.want)
		}
	}
}

func TestClusterColumns(t *testing.T) {
	t.Parallel()
	names := func(cs []metav1.TableColumnDefinition) (out []string) {
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	got := ClusterColumns(deploymentColumns, deployments.Resource.GroupResource())
	if diff := cmp.Diff([]string{"Name", "CLUSTER", "Ready", "Age", "Images", "ADOPTION", "DRIFT"}, names(got)); diff != "" {
		t.Errorf("deployment columns (-want +got):\n%s", diff)
	}
	if got[len(got)-2].Priority != 0 || got[4].Priority != 1 || got[len(got)-1].Priority != 1 {
		t.Errorf("priorities %+v: ADOPTION shows by default, the server's wide columns and DRIFT stay wide", got)
	}
	got = ClusterColumns(podColumns, pods.Resource.GroupResource())
	if diff := cmp.Diff([]string{"Name", "CLUSTER", "Status", "Node", "ADOPTION", "DRIFT"}, names(got)); diff != "" {
		t.Errorf("pod columns (-want +got):\n%s", diff)
	}
	if got[len(got)-2].Priority != 1 {
		t.Errorf("pods: ADOPTION priority %d, want 1 (-o wide only, as karmadactl)", got[len(got)-2].Priority)
	}
	if ClusterColumns(nil, pods.Resource.GroupResource()) != nil {
		t.Error("a table without columns gets none")
	}
}

func TestDecodeTableAndClusterRow(t *testing.T) {
	t.Parallel()
	table, err := DecodeTable(serverTable(t, deploymentColumns,
		row{namespace: "ns", name: "web", labels: managed, cells: []interface{}{"1/1", "5m", "nginx"}},
		row{namespace: "ns", name: "local", cells: []interface{}{"0/1", "1m", "busybox"}},
	), time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		cluster      string
		controlPlane bool
		want         []interface{}
	}{
		{"member1", false, []interface{}{"web", "member1", "1/1", "5m", "nginx", Adopted, DriftUnknown}},
		{"member2", false, []interface{}{"local", "member2", "0/1", "1m", "busybox", NotAdopted, DriftUnknown}},
		{ControlPlaneName, true, []interface{}{"web", ControlPlaneName, "1/1", "5m", "nginx", NoAdoption, DriftUnknown}},
	} {
		r := table.Rows[i%2]
		got := ClusterRow(r, tc.cluster, tc.controlPlane, false, "")
		if diff := cmp.Diff(tc.want, got.Cells); diff != "" {
			t.Errorf("row %d in %s (-want +got):\n%s", i%2, tc.cluster, diff)
		}
		if len(r.Cells) != 4 {
			t.Errorf("ClusterRow changed its input: %v", r.Cells)
		}
	}
}

func TestDecodeTableOfAnObject(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.io/v1")
	u.SetKind("Widget")
	u.SetName("w")
	u.SetCreationTimestamp(metav1.NewTime(now.Add(-3 * time.Hour)))
	table, err := DecodeTable(u, now, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 || !cmp.Equal(table.Rows[0].Cells, []interface{}{"w", "3h"}) || table.ColumnDefinitions[0].Name != "Name" {
		t.Errorf("a server without tables: %+v, want NAME w AGE 3h", table)
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	decode := func(u *unstructured.Unstructured) *metav1.Table {
		table, err := DecodeTable(u, time.Now(), false)
		if err != nil {
			t.Fatal(err)
		}
		return table
	}
	otherColumns := []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Phase", Type: "string"}}
	merged := Merge([]Part{
		{Cluster: ControlPlaneName, ControlPlane: true, Mapping: deployments, Table: decode(serverTable(t, deploymentColumns, row{name: "web", cells: []interface{}{"2/2", "5m", "nginx"}}))},
		{Cluster: "member1", Mapping: pods, Table: decode(serverTable(t, podColumns, row{name: "web-1", cells: []interface{}{"Running", "n1"}}))},
		{Cluster: "member1", Mapping: deployments, Table: decode(serverTable(t, deploymentColumns, row{name: "web", labels: managed, cells: []interface{}{"1/1", "5m", "nginx"}}))},
		{Cluster: "member2", Mapping: deployments, Table: decode(serverTable(t, deploymentColumns, row{name: "web", labels: managed, cells: []interface{}{"1/1", "5m", "nginx"}}))},
		{Cluster: "member3", Mapping: pods, Table: decode(serverTable(t, otherColumns, row{name: "odd", cells: []interface{}{"Pending"}}))},
		{Cluster: "member2", Mapping: pods, Table: decode(serverTable(t, podColumns))},
	})
	var got []string
	for _, m := range merged {
		var rows []string
		for _, r := range m.Table.Rows {
			rows = append(rows, r.Cells[0].(string)+"@"+r.Cells[1].(string)+"="+r.Cells[len(r.Cells)-2].(string))
		}
		got = append(got, m.Mapping.Resource.Resource+": "+strings.Join(rows, " "))
	}
	want := []string{
		"deployments: web@Karmada=- web@member1=Y web@member2=Y",
		"pods: web-1@member1=N",
		"pods: odd@member3=N",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged tables (-want +got):\n%s", diff)
	}
}

func TestWithClusterLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Name:               web\nNamespace:          ns\n", "Cluster:            member1\nName:               web\nNamespace:          ns\n"},
		{"Name:  web\n", "Cluster: member1\nName:  web\n"},
		{"no header line\n", "Cluster: member1\nno header line\n"},
		{"", "Cluster: member1\n"},
	} {
		if got := WithClusterLine(tc.in, "member1"); got != tc.want {
			t.Errorf("WithClusterLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDecodeTypedTable: a table read with the table scheme (as the
// builder reads it) decodes to the same rows, with or without the whole
// row objects.
func TestDecodeTypedTable(t *testing.T) {
	t.Parallel()
	raw, err := serverTable(t, deploymentColumns,
		row{namespace: "ns", name: "web", labels: managed, cells: []interface{}{"1/1", "5m", "nginx"}}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, full := range []bool{false, true} {
		obj, _, err := serializer.NewCodecFactory(newTableScheme()).UniversalDeserializer().Decode(raw, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := obj.(*metav1.Table); !ok {
			t.Fatalf("the table scheme decodes a Table into %T", obj)
		}
		table, err := DecodeTable(obj, time.Now(), full)
		if err != nil {
			t.Fatal(err)
		}
		m, err := meta.Accessor(table.Rows[0].Object.Object)
		if err != nil {
			t.Fatal(err)
		}
		if m.GetNamespace() != "ns" || m.GetName() != "web" || m.GetResourceVersion() != "7" || !cmp.Equal(m.GetLabels(), managed) {
			t.Errorf("full=%v: row object %s/%s rv %s labels %v", full, m.GetNamespace(), m.GetName(), m.GetResourceVersion(), m.GetLabels())
		}
		got := ClusterRow(table.Rows[0], "member1", false, false, "").Cells
		if diff := cmp.Diff([]interface{}{"web", "member1", "1/1", "5m", "nginx", Adopted, DriftUnknown}, got); diff != "" {
			t.Errorf("full=%v (-want +got):\n%s", full, diff)
		}
	}
}
