// Package drift compares what Flotilla applied to a member cluster with
// what the member holds, in the fields Flotilla owns: the fields of the
// applied manifest (so not what the member's own controllers add or
// default), apart from status and the object's identity. It is a pure
// package: the execution controller feeds it the manifest as it would
// write it (after the resource interpreter's Retain copied what the member
// keeps, so those fields never differ) and the member object from its
// watch, and records what it returns.
package drift

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// DefaultMaxFields bounds a report when Options.MaxFields is 0: the most a
// Work's status may list.
const DefaultMaxFields = workv1alpha1.MaxDriftedFields

// maxValueLength bounds a value's JSON in a report.
const maxValueLength = 256

// Masked stands for a Secret's value in a report.
const Masked = "<masked>"

// Absent stands for a field the member object lacks.
const Absent = "<absent>"

// Report is the outcome of a comparison.
type Report struct {
	// Fields are the drifted fields in path order, at most
	// Options.MaxFields, as a Work's status lists them.
	Fields []workv1alpha1.DriftedField
	// Omitted counts the drifted fields left out of Fields.
	Omitted int
}

// Drifted reports whether any owned field differs.
func (r Report) Drifted() bool { return len(r.Fields) > 0 || r.Omitted > 0 }

// Paths returns the paths of Fields, and "(+N more)" when some were left
// out: for events and logs.
func (r Report) Paths() string {
	paths := make([]string, 0, len(r.Fields)+1)
	for _, f := range r.Fields {
		paths = append(paths, f.Path)
	}
	if r.Omitted > 0 {
		paths = append(paths, fmt.Sprintf("(+%d more)", r.Omitted))
	}
	return strings.Join(paths, ", ")
}

// Options tune a comparison.
type Options struct {
	// MaxFields bounds Report.Fields; DefaultMaxFields when 0.
	MaxFields int
}

// Compare returns the owned fields of applied whose values differ in
// member. Both are objects as decoded from JSON (unstructured content).
// Owned: metadata.labels and metadata.annotations, and every other
// top-level field but apiVersion, kind, metadata and status. A Secret's
// stringData is compared as the data the member stores, and its values
// are masked in the report.
func Compare(applied, member map[string]any, opts Options) Report {
	limit := opts.MaxFields
	if limit <= 0 {
		limit = DefaultMaxFields
	}
	c := &comparer{limit: limit, secret: applied["kind"] == "Secret" && applied["apiVersion"] == "v1"}
	if c.secret {
		applied = secretAsStored(applied)
	}
	keys := sortedKeys(applied)
	for _, k := range keys {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			am, _ := applied[k].(map[string]any)
			mm, _ := member[k].(map[string]any)
			for _, sub := range []string{"annotations", "labels"} {
				if v, ok := am[sub]; ok {
					if sub == "annotations" {
						v = withoutLastApplied(v)
					}
					mv, found := mm[sub]
					c.compare("metadata."+sub, v, mv, found, false)
				}
			}
		default:
			mv, found := member[k]
			c.compare(k, applied[k], mv, found, false)
		}
	}
	return c.report
}

type comparer struct {
	limit  int
	secret bool
	report Report
}

// compare walks the applied value a at path against the member's m (found
// says whether the member has the field at all); quantity says the values
// below are resource quantities. An empty applied value matches an absent
// one, as the member's API server drops empty fields.
func (c *comparer) compare(path string, a, m any, found, quantity bool) {
	if !found || m == nil {
		if !IsZero(a) {
			c.add(path, nil, a, false)
		}
		return
	}
	switch av := a.(type) {
	case map[string]any:
		mv, ok := m.(map[string]any)
		if !ok {
			c.add(path, m, a, true)
			return
		}
		for _, k := range sortedKeys(av) {
			v, ok := mv[k]
			c.compare(path+"."+k, av[k], v, ok, quantity || slices.Contains(QuantityKeys, k))
		}
	case []any:
		mv, ok := m.([]any)
		if !ok {
			c.add(path, m, a, true)
			return
		}
		c.compareList(path, av, mv, quantity)
	default:
		if !ScalarEqual(a, m, quantity) {
			c.add(path, m, a, true)
		}
	}
}

// lastApplied is kubectl's copy of what it applied to the template: not a
// field of the workload.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// withoutLastApplied returns annotations without lastApplied, so that an
// applied copy is no difference even where the member has no annotations.
func withoutLastApplied(annotations any) any {
	m, ok := annotations.(map[string]any)
	if !ok {
		return annotations
	}
	if _, has := m[lastApplied]; !has {
		return annotations
	}
	out := make(map[string]any, len(m)-1)
	for k, v := range m {
		if k != lastApplied {
			out[k] = v
		}
	}
	return out
}

// compareList matches the items of a list of named objects by name and
// compares them; another list is owned as a whole (order included).
func (c *comparer) compareList(path string, a, m []any, quantity bool) {
	if names, ok := itemNames(a); ok {
		byName := map[string]any{}
		if mnames, ok := itemNames(m); ok {
			for i, n := range mnames {
				byName[n] = m[i]
			}
		}
		for i, n := range names {
			v, found := byName[n]
			c.compare(path+"[name="+n+"]", a[i], v, found, quantity)
		}
		return
	}
	if len(a) != len(m) || !slices.ContainsFunc(a, isComposite) {
		if !listEqual(a, m, quantity) {
			c.add(path, m, a, true)
		}
		return
	}
	for i := range a {
		c.compare(path+"["+strconv.Itoa(i)+"]", a[i], m[i], true, quantity)
	}
}

func isComposite(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// listEqual compares lists of scalars (or of unequal length) item by item.
func listEqual(a, m []any, quantity bool) bool {
	if len(a) != len(m) {
		return false
	}
	for i := range a {
		if isComposite(a[i]) || isComposite(m[i]) {
			if !jsonEqual(a[i], m[i]) {
				return false
			}
			continue
		}
		if !ScalarEqual(a[i], m[i], quantity) {
			return false
		}
	}
	return true
}

// itemNames returns the "name" of every item when each is an object with
// a string name, the names being distinct.
func itemNames(items []any) ([]string, bool) {
	if len(items) == 0 {
		return nil, false
	}
	names := make([]string, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, false
		}
		n, ok := m["name"].(string)
		if !ok || seen[n] {
			return nil, false
		}
		seen[n] = true
		names = append(names, n)
	}
	return names, true
}

func jsonEqual(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ab) == string(bb)
}

func (c *comparer) add(path string, m, a any, found bool) {
	if len(c.report.Fields) >= c.limit {
		c.report.Omitted++
		return
	}
	if len(path) > workv1alpha1.MaxDriftedFieldLength {
		// Within what a Work's status accepts; the start names the field.
		path = path[:workv1alpha1.MaxDriftedFieldLength-len("…")] + "…"
	}
	f := workv1alpha1.DriftedField{Path: path, ValueInMember: Absent, ValueApplied: render(a)}
	if found {
		f.ValueInMember = render(m)
	}
	if c.secret && (path == "data" || strings.HasPrefix(path, "data.")) {
		if found {
			f.ValueInMember = Masked
		}
		f.ValueApplied = Masked
	}
	c.report.Fields = append(c.report.Fields, f)
}

// render is v as JSON, cut at maxValueLength bytes.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > maxValueLength {
		return string(b[:maxValueLength]) + "…"
	}
	return string(b)
}

// secretAsStored returns a Secret manifest with its stringData folded into
// data (base64), as the member's API server stores it.
func secretAsStored(obj map[string]any) map[string]any {
	sd, ok := obj["stringData"].(map[string]any)
	if !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "stringData" {
			out[k] = v
		}
	}
	data := map[string]any{}
	if d, ok := obj["data"].(map[string]any); ok {
		for k, v := range d {
			data[k] = v
		}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	out["data"] = data
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Has tells whether path is among the reported fields.
func (r Report) Has(path string) bool {
	return slices.ContainsFunc(r.Fields, func(f workv1alpha1.DriftedField) bool { return f.Path == path })
}
