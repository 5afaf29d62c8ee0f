package charts

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// renderRelease renders the embedded chart name as `helm template` does,
// by "Kind/name" ("Kind/namespace/name" outside rel's namespace), failing
// the test when an object is rendered twice.
func renderRelease(t *testing.T, name string, rel Release) (rendered, *Rendered, error) {
	t.Helper()
	chrt, err := Load(name)
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	res, err := Render(chrt, rel, nil)
	if err != nil {
		return nil, nil, err
	}
	out := rendered{}
	for _, u := range res.Objects {
		key := u.GetKind() + "/" + u.GetName()
		if ns := u.GetNamespace(); ns != rel.Namespace && ns != "" {
			key = u.GetKind() + "/" + ns + "/" + u.GetName()
		}
		if _, dup := out[key]; dup {
			t.Errorf("%s rendered twice", key)
		}
		out[key] = u
	}
	return out, res, nil
}

// renderCase renders values: wantErr is a substring of the rendering
// error (empty: it must render), and check looks at the objects.
type renderCase struct {
	name    string
	values  map[string]any
	wantErr string
	check   func(t *testing.T, objs rendered)
}

// runRenderCases runs each case in parallel with render.
func runRenderCases(t *testing.T, cases []renderCase, render func(*testing.T, map[string]any) (rendered, error)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs, err := render(t, tc.values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("rendering: %v", err)
			}
			tc.check(t, objs)
		})
	}
}

// lintCase is one set of values to lint with.
type lintCase struct {
	name   string
	values map[string]any
}

// lintChart lints the chart in directory name with each case's values, as
// `helm lint` does; warnings fail.
func lintChart(t *testing.T, name, namespace string, cases []lintCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, m := range lint.All(name, tc.values, namespace, false).Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("lint: %s", m)
				}
			}
		})
	}
}

// checkDocumented fails for each value of chart name missing from its
// README's table; whole names free-form maps documented as one.
func checkDocumented(t *testing.T, name string, whole map[string]bool, atLeast int) {
	t.Helper()
	c, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	missing, n := undocumented(t, c, whole)
	for _, p := range missing {
		t.Errorf("value %s is not in the README's table", p)
	}
	if n < atLeast {
		t.Errorf("only %d values walked", n)
	}
}
