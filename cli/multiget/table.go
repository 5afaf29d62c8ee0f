package multiget

import (
	"fmt"
	"strings"
	"time"

	jsoniter "github.com/json-iterator/go"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// The columns karmadactl adds to the server's tables.
const (
	// ClusterColumn follows the first (NAME) column: where the row was read.
	ClusterColumn = "CLUSTER"
	// AdoptionColumn ends the row: whether the member object is one the
	// control plane propagated (karmada.io/managed=true).
	AdoptionColumn = "ADOPTION"
)

// The values of AdoptionColumn.
const (
	// Adopted is a member object the control plane manages.
	Adopted = "Y"
	// NotAdopted is a member object the control plane does not manage.
	NotAdopted = "N"
	// NoAdoption is a control-plane object: adoption does not apply.
	NoAdoption = "-"
)

// Adoption is the ADOPTION cell of an object read from a member, or from
// the control plane when controlPlane is set. takenOver says the control
// plane took the member object over without writing it (a promoted one,
// still without its labels).
func Adoption(labels map[string]string, controlPlane, takenOver bool) string {
	switch {
	case controlPlane:
		return NoAdoption
	case takenOver, labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue:
		return Adopted
	}
	return NotAdopted
}

// ClusterColumns returns a server table's columns with CLUSTER after the
// first and ADOPTION last. As in karmadactl, pods show ADOPTION only with
// -o wide (priority 1): the control plane does not propagate pods, their
// controllers in the member create them.
func ClusterColumns(columns []metav1.TableColumnDefinition, resource schema.GroupResource) []metav1.TableColumnDefinition {
	if len(columns) == 0 {
		return nil
	}
	priority := int32(0)
	if resource == (schema.GroupResource{Resource: "pods"}) {
		priority = 1
	}
	out := make([]metav1.TableColumnDefinition, 0, len(columns)+3)
	out = append(out, columns[0], metav1.TableColumnDefinition{Name: ClusterColumn, Type: "string", Description: "The cluster the object was read from."})
	out = append(out, columns[1:]...)
	return append(out, metav1.TableColumnDefinition{Name: AdoptionColumn, Type: "string", Priority: priority,
		Description: "Y: a member object the control plane propagated; N: a member object it does not manage; -: a control-plane object."},
		metav1.TableColumnDefinition{Name: DriftColumn, Type: "string", Priority: 1,
			Description: "Open: the member object differs from what was applied; Corrected: it did, and was written back; No: it has not drifted; -: not known."})
}

// rowMeta is the metadata of a row's decoded object, or nil.
func rowMeta(row metav1.TableRow) metav1.Object {
	if row.Object.Object == nil {
		return nil
	}
	m, err := meta.Accessor(row.Object.Object)
	if err != nil {
		return nil
	}
	return m
}

// rowKey is namespace/name (name for a cluster-scoped object) of a row's
// object; "" when the row has no decoded object.
func rowKey(row metav1.TableRow) string {
	m := rowMeta(row)
	if m == nil {
		return ""
	}
	return cache.NewObjectName(m.GetNamespace(), m.GetName()).String()
}

// ClusterRow returns a row's cells with the cluster after the first, then
// the adoption and the drift (DriftUnknown when empty) last; the row's
// object must already be decoded (its labels decide the adoption).
func ClusterRow(row metav1.TableRow, cluster string, controlPlane, takenOver bool, drift string) metav1.TableRow {
	var labels map[string]string
	if m := rowMeta(row); m != nil {
		labels = m.GetLabels()
	}
	cells := make([]interface{}, 0, len(row.Cells)+2)
	if len(row.Cells) > 0 {
		cells = append(cells, row.Cells[0])
	}
	cells = append(cells, cluster)
	if len(row.Cells) > 1 {
		cells = append(cells, row.Cells[1:]...)
	}
	if drift == "" {
		drift = DriftUnknown
	}
	row.Cells = append(cells, Adoption(labels, controlPlane, takenOver), drift)
	return row
}

// recognizedTables are the kinds a server answers as=Table with.
var recognizedTables = map[schema.GroupVersionKind]bool{
	metav1.SchemeGroupVersion.WithKind("Table"):      true,
	metav1beta1.SchemeGroupVersion.WithKind("Table"): true,
}

// DecodeTable turns a server's answer, a typed Table or an unstructured
// one, into a Table with each row's object decoded, as kubectl's table
// printer does: whole unstructured objects when full (sorting reads their
// fields), otherwise only the metadata the printer and the ADOPTION column
// read (namespace, name, labels, resourceVersion), which skips the bulk of
// each row (managedFields). An object that is not a Table (a server that
// cannot print tables) becomes a table of one row with kubectl's default
// NAME and AGE columns.
func DecodeTable(obj runtime.Object, now time.Time, full bool) (*metav1.Table, error) {
	var table *metav1.Table
	switch o := obj.(type) {
	case *metav1.Table:
		table = o
	case *unstructured.Unstructured:
		if !recognizedTables[o.GroupVersionKind()] {
			return defaultTable(o, now), nil
		}
		table = &metav1.Table{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, table); err != nil {
			return nil, fmt.Errorf("decoding a table: %w", err)
		}
	default:
		return nil, fmt.Errorf("decoding a table: unexpected %T", obj)
	}
	for i := range table.Rows {
		row := &table.Rows[i]
		if row.Object.Raw == nil || row.Object.Object != nil {
			continue
		}
		var err error
		if full {
			row.Object.Object, err = runtime.Decode(unstructured.UnstructuredJSONScheme, row.Object.Raw)
		} else {
			row.Object.Object, err = decodeRowMetadata(row.Object.Raw)
		}
		if err != nil {
			return nil, fmt.Errorf("decoding a table row: %w", err)
		}
	}
	return table, nil
}

// rowJSON decodes rows' metadata two and a half times as fast as
// sigs.k8s.io/json (a pod's row is mostly managedFields, which it skips),
// field names case-sensitive as apimachinery's decoder.
var rowJSON = jsoniter.Config{CaseSensitive: true}.Froze()

// rowMetadata is the part of a row's object that is printed.
type rowMetadata struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
}

func decodeRowMetadata(raw []byte) (*metav1.PartialObjectMetadata, error) {
	var m rowMetadata
	if err := rowJSON.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: m.Metadata.Name, Namespace: m.Metadata.Namespace, ResourceVersion: m.Metadata.ResourceVersion, Labels: m.Metadata.Labels,
	}}, nil
}

func defaultTable(u *unstructured.Unstructured, now time.Time) *metav1.Table {
	age := "<unknown>"
	if ts := u.GetCreationTimestamp(); !ts.IsZero() {
		age = duration.HumanDuration(now.Sub(ts.Time))
	}
	return &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name"},
			{Name: "Age", Type: "string"},
		},
		Rows: []metav1.TableRow{{Cells: []interface{}{u.GetName(), age}, Object: runtime.RawExtension{Object: u}}},
	}
}

// Part is one cluster's table of one resource.
type Part struct {
	Cluster      string
	ControlPlane bool
	Mapping      *meta.RESTMapping
	Table        *metav1.Table
	// TakenOver holds the namespace/name keys of the member objects the
	// control plane took over without writing them (promoted ones): they
	// show as adopted though they lack its labels.
	TakenOver sets.Set[string]
	// Drift holds the DRIFT cells of member objects by namespace/name
	// (DriftUnknown when absent).
	Drift map[string]string
}

// Merged is the one table of a resource over every cluster that served it.
type Merged struct {
	Mapping *meta.RESTMapping
	Table   *metav1.Table
}

// Merge joins parts into one table per resource, with the CLUSTER and
// ADOPTION columns, in the order the resources first appear and, within
// one, in the parts' order (the control plane, then the members). Parts
// of one resource whose columns differ (members serving different
// versions of a CRD) print as separate tables rather than misaligned.
func Merge(parts []Part) []Merged {
	var out []Merged
	index := map[string]int{}
	for _, p := range parts {
		if p.Table == nil || p.Mapping == nil {
			continue
		}
		key := p.Mapping.Resource.String() + "|" + columnNames(p.Table.ColumnDefinitions)
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, Merged{Mapping: p.Mapping, Table: &metav1.Table{
				ListMeta:          p.Table.ListMeta,
				ColumnDefinitions: ClusterColumns(p.Table.ColumnDefinitions, p.Mapping.Resource.GroupResource()),
			}})
		}
		for _, row := range p.Table.Rows {
			key := rowKey(row)
			out[i].Table.Rows = append(out[i].Table.Rows, ClusterRow(row, p.Cluster, p.ControlPlane, p.TakenOver.Has(key), p.Drift[key]))
		}
	}
	return out
}

func columnNames(columns []metav1.TableColumnDefinition) string {
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}
