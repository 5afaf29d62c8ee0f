package encoded

import (
	"bytes"
	"testing"
)

func TestPrint(t *testing.T) {
	t.Parallel()
	v := map[string]int{"a": 1}
	tests := []struct {
		output, want, wantErr string
		done                  bool
	}{
		{output: "yaml", want: "a: 1\n", done: true},
		{output: "json", want: "{\n    \"a\": 1\n}\n", done: true},
		{output: ""},
		{output: "wide"},
		{output: "name", wantErr: `unknown output format "name": one of wide, yaml, json`},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		done, err := Print(&b, v, tc.output, "", "wide")
		if done != tc.done || b.String() != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
			t.Errorf("-o %q: done %v, %q, %v; want %v, %q, %q", tc.output, done, b.String(), err, tc.done, tc.want, tc.wantErr)
		}
	}
}
