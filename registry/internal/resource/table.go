package resource

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// tableConvertor prints NAME, the kind's columns, then AGE, as kubectl does
// for Karmada's CRDs with their additional printer columns.
type tableConvertor struct {
	def *Definition
}

func (t tableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if o, ok := opts.(*metav1.TableOptions); !ok || !o.NoHeaders {
		table.ColumnDefinitions = append([]metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name", Description: "Name of the object."}}, t.def.Columns...)
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: "Age", Type: "date", Description: "Time since creation."})
	}
	add := func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		cells := []any{m.GetName()}
		if t.def.Cells != nil {
			cells = append(cells, t.def.Cells(o)...)
		}
		cells = append(cells, Age(m.GetCreationTimestamp()))
		table.Rows = append(table.Rows, metav1.TableRow{Object: runtime.RawExtension{Object: o}, Cells: cells})
		return nil
	}
	if meta.IsListType(obj) {
		if l, err := meta.ListAccessor(obj); err == nil {
			table.ResourceVersion, table.Continue, table.RemainingItemCount = l.GetResourceVersion(), l.GetContinue(), l.GetRemainingItemCount()
		}
		err := meta.EachListItem(obj, add)
		return table, err
	}
	if m, err := meta.Accessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	return table, add(obj)
}

// Age prints a creation time as kubectl does.
func Age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(metav1.Now().Sub(t.Time))
}

// ConditionStatus returns the status of a condition, or "" when absent.
func ConditionStatus(conds []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return string(c.Status)
	}
	return ""
}
