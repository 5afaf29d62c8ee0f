package initialize

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestInitValues(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := file("a.yaml", "etcd:\n  mode: external\n  external:\n    endpoints: [https://x:2379]\napiserver:\n  replicas: 3\n")
	b := file("b.yaml", "apiserver:\n  replicas: 1\n  extraArgs: [--v=2]\n")
	for _, tc := range []struct {
		name        string
		files, sets []string
		want        map[string]any
		wantErr     string
	}{
		{name: "none", want: map[string]any{}},
		{name: "set only", sets: []string{"etcd.mode=embedded", "apiserver.replicas=1"},
			want: map[string]any{"etcd": map[string]any{"mode": "embedded"}, "apiserver": map[string]any{"replicas": int64(1)}}},
		{name: "later file wins, tables merge", files: []string{a, b},
			want: map[string]any{"etcd": map[string]any{"mode": "external", "external": map[string]any{"endpoints": []any{"https://x:2379"}}},
				"apiserver": map[string]any{"replicas": float64(1), "extraArgs": []any{"--v=2"}}}},
		{name: "set over file", files: []string{a}, sets: []string{"etcd.mode=bundled"},
			want: map[string]any{"etcd": map[string]any{"mode": "bundled", "external": map[string]any{"endpoints": []any{"https://x:2379"}}},
				"apiserver": map[string]any{"replicas": float64(3)}}},
		{name: "missing file", files: []string{filepath.Join(dir, "nope.yaml")}, wantErr: "nope.yaml"},
		{name: "bad set", sets: []string{"a.b"}, wantErr: "--set a.b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewInitOptions(nil)
			o.ValueFiles, o.Values = tc.files, tc.sets
			got, err := o.values()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("values %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestInstallFlagsValidate(t *testing.T) {
	for _, tc := range []struct {
		f       ReleaseFlags
		wantErr string
	}{
		{f: ReleaseFlags{Release: "flotilla", DryRun: dryRunNone}},
		{f: ReleaseFlags{Release: "flotilla", DryRun: dryRunServer}},
		{f: ReleaseFlags{Release: "flotilla", DryRun: "yes"}, wantErr: `--dry-run must be "none", "client" or "server", got "yes"`},
		{f: ReleaseFlags{DryRun: dryRunNone}, wantErr: "--release must not be empty"},
	} {
		err := tc.f.validate()
		if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
			t.Errorf("%+v: error %v, want %q", tc.f, err, tc.wantErr)
		}
	}
	empty := ""
	if got := (&ReleaseFlags{Namespace: &empty}).ns(); got != "karmada-system" {
		t.Errorf("namespace %q, want %q by default", got, "karmada-system")
	}
}
