package webhook

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
)

// patchOf joins n copies of op, with %d replaced by the copy's number, into a
// JSON patch.
func patchOf(n int, op string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strings.ReplaceAll(op, "%d", fmt.Sprint(i))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// A patch is refused, quickly, when it or what it makes goes over a bound.
func TestPatchBounds(t *testing.T) {
	t.Parallel()
	const small = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`
	big := func(n int) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"big":"` + strings.Repeat("x", n) + `"}}`
	}
	list := `{"apiVersion":"v1","kind":"List","metadata":{"name":"a"},"items":[` + strings.Repeat("0,", 100_000) + `0]}`
	for _, tc := range []struct {
		name, object, patch, want string
	}{
		{"applied", small, `[{"op":"add","path":"/data/k2","value":"v2"},{"op":"copy","from":"/data/k","path":"/data/k3"}]`, ""},
		{"copying a large value repeatedly", big(200_000), patchOf(40, `{"op":"copy","from":"/data/big","path":"/data/c%d"}`),
			"its copies add more than 3145728 bytes (maxPatchedBytes)"},
		{"copying a copy", big(1000), patchOf(20, `{"op":"copy","from":"/data","path":"/data/c%d"}`),
			"(maxPatchedBytes)"},
		{"too large a patch", small, `[{"op":"add","path":"/data/x","value":"` + strings.Repeat("x", 3<<20) + `"}]`,
			"larger than 2097152 bytes (maxPatchBytes)"},
		{"too many operations", small, patchOf(10_001, `{"op":"test","path":"/data/k","value":"v"}`),
			"more than 10000 (maxPatchOperations)"},
		{"insertions into a long list", list, patchOf(1000, `{"op":"add","path":"/items/0","value":1}`), "(maxPatchWork)"},
		{"removals from a long list", list, patchOf(1000, `{"op":"remove","path":"/items/0"}`), "(maxPatchWork)"},
		{"appending to a long list", list, patchOf(1000, `{"op":"add","path":"/items/-","value":1}`), ""},
		{"too large a result", big(1_500_000), `[{"op":"add","path":"/data/more","value":"` + strings.Repeat("y", 1_800_000) + `"}]`,
			"larger than 3145728 bytes (maxPatchedBytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &result{webhook: "w", op: interpreter.Retain, object: []byte(tc.object),
				response: &configv1alpha1.ResourceInterpreterResponse{Patch: []byte(tc.patch),
					PatchType: ptr.To(configv1alpha1.PatchTypeJSONPatch)}}
			start := time.Now()
			u, err := r.patched()
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
			if tc.want == "" {
				if err != nil || u == nil {
					t.Fatalf("patched() = %v, %v", u, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAtIndex(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{"/a/0": true, "/a/12": true, "/a/-": false, "/a/b": false, "": false, "/a/": false, "/0x": false} {
		if got := atIndex(p); got != want {
			t.Errorf("atIndex(%q) = %v, want %v", p, got, want)
		}
	}
}
