package drift

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// Holds tells whether member holds again, at f's path, the value f records
// as applied, as Compare judges values (quantities by amount, an empty
// value as an absent one). known is false when that cannot be told from
// f: its value is masked or cut, or its path cut.
func Holds(member map[string]any, f workv1alpha1.DriftedField) (holds, known bool) {
	if f.ValueApplied == Masked || strings.HasSuffix(f.ValueApplied, "…") || strings.HasSuffix(f.Path, "…") {
		return false, false
	}
	var applied any
	if err := json.Unmarshal([]byte(f.ValueApplied), &applied); err != nil {
		return false, false
	}
	v, found, quantity := lookup(member, f.Path)
	c := &comparer{limit: 1}
	c.compare(f.Path, applied, v, found, quantity)
	return !c.report.Drifted(), true
}

// lookup returns the value of obj at path, a path as Compare writes it:
// keys joined by ".", "[name=<n>]" for the item of a list of named objects
// called n, "[<i>]" for the i-th item of another list. Keys may hold dots
// (label keys do), so each is matched against the keys obj has, the longest
// first. quantity says a key on the way is one of QuantityKeys.
func lookup(obj map[string]any, path string) (v any, found, quantity bool) {
	var cur any = obj
	rest := path
	for first := true; rest != ""; first = false {
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			list, ok := cur.([]any)
			if end < 0 || !ok {
				return nil, false, quantity
			}
			seg := rest[1:end]
			rest = rest[end+1:]
			if name, ok := strings.CutPrefix(seg, "name="); ok {
				i := slices.IndexFunc(list, func(it any) bool {
					m, ok := it.(map[string]any)
					return ok && m["name"] == name
				})
				if i < 0 {
					return nil, false, quantity
				}
				cur = list[i]
				continue
			}
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(list) {
				return nil, false, quantity
			}
			cur = list[i]
			continue
		}
		if !first {
			var ok bool
			if rest, ok = strings.CutPrefix(rest, "."); !ok {
				return nil, false, quantity
			}
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, quantity
		}
		key := ""
		for k := range m {
			if len(k) > len(key) && strings.HasPrefix(rest, k) && (len(rest) == len(k) || rest[len(k)] == '.' || rest[len(k)] == '[') {
				key = k
			}
		}
		if key == "" {
			return nil, false, quantity
		}
		quantity = quantity || slices.Contains(QuantityKeys, key)
		cur, rest = m[key], rest[len(key):]
	}
	return cur, true, quantity
}
