package drift

import (
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// QuantityKeys name the maps whose values are resource quantities, which an
// API server stores in canonical form ("1000m" comes back as "1").
var QuantityKeys = []string{"requests", "limits", "capacity", "hard", "allocatable", "overhead"}

// IsZero tells whether v is a value an API server drops as empty when it
// stores a typed object (null, "", 0, false, {} or []): a manifest field
// with such a value matches an absent one.
func IsZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	case bool:
		return !x
	case int64:
		return x == 0
	case float64:
		return x == 0
	}
	return false
}

// ScalarEqual compares JSON scalars: numbers by value whatever their Go
// type, and, when quantity says the values are resource quantities, by
// what they measure.
func ScalarEqual(want, have any, quantity bool) bool {
	if wn, ok := number(want); ok {
		if hn, ok := number(have); ok {
			return wn == hn
		}
	}
	if want == have {
		return true
	}
	if quantity {
		wq, err1 := resource.ParseQuantity(scalarString(want))
		hq, err2 := resource.ParseQuantity(scalarString(have))
		return err1 == nil && err2 == nil && wq.Cmp(hq) == 0
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	}
	return 0, false
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}
