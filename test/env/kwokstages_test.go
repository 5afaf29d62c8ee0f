package env

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	testNodeStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: 'NotIn'
      values: ['Running']
  next:
    statusTemplate: |
      phase: Running
`
	testPodReadyStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: 'In'
      values: ['Pending']
  next:
    statusTemplate: |
      phase: Running
`
	testPodDeleteStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    delete: true
`
)

func decodeDocs(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []map[string]any
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		if len(obj) > 0 {
			docs = append(docs, obj)
		}
	}
}

func TestRenderKwokStages(t *testing.T) {
	t.Parallel()
	fakeExcluded := map[string]any{"jq": map[string]any{
		"key": `.spec.containers.[].image | startswith("fake/")`, "operator": "NotIn", "values": []any{"true"},
	}}
	tests := []struct {
		name    string
		in      string
		wantErr string
		// want maps each input stage to its expected change: the
		// matchExpressions appended to it (nil: unchanged).
		want map[string][]any
	}{
		{
			name: "kwok's set: pod-ready leaves the fake registry out, the rest unchanged",
			in:   "---\n" + testNodeStage + "---\n" + testPodReadyStage + "---\n" + testPodDeleteStage,
			want: map[string][]any{"node-initialize": nil, "pod-ready": {fakeExcluded}, "pod-delete": nil},
		},
		{
			name: "pod-ready alone, no leading separator",
			in:   testPodReadyStage,
			want: map[string][]any{"pod-ready": {fakeExcluded}},
		},
		{
			name:    "no pod-ready (kwok renamed it)",
			in:      testNodeStage + "---\n" + testPodDeleteStage,
			wantErr: "no Stage pod-ready",
		},
		{
			name:    "pod-ready without a selector",
			in:      "apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata: {name: pod-ready}\nspec: {resourceRef: {kind: Pod}}\n",
			wantErr: "no selector",
		},
		{
			name:    "not YAML",
			in:      "kind: [Stage\n",
			wantErr: "yaml",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := renderKwokStages([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			in, out := decodeDocs(t, []byte(tc.in)), decodeDocs(t, got)
			if len(out) != len(in)+1 {
				t.Fatalf("got %d stages, want the %d given and %s", len(out), len(in), stageImagePullBackOff)
			}
			for i, stage := range in {
				name := nested(stage, "metadata", "name").(string)
				if appended := tc.want[name]; appended != nil {
					sel := nested(stage, "spec", "selector").(map[string]any)
					sel["matchExpressions"] = append(sel["matchExpressions"].([]any), appended...)
				}
				if diff := cmp.Diff(stage, out[i]); diff != "" {
					t.Errorf("stage %s (-want +got):\n%s", name, diff)
				}
			}
			if diff := cmp.Diff(imagePullBackOffStage(), out[len(in)]); diff != "" {
				t.Errorf("last stage is not %s (-want +got):\n%s", stageImagePullBackOff, diff)
			}
		})
	}
}

// The stage of the fake registry selects by the same query pod-ready
// excludes, and stops matching once its status is written: its selector
// excludes the waiting reason its template writes.
func TestImagePullBackOffStage(t *testing.T) {
	t.Parallel()
	stage := imagePullBackOffStage()
	exprs := nested(stage, "spec", "selector", "matchExpressions").([]any)
	has := func(key, op, value string) bool {
		for _, e := range exprs {
			jq := e.(map[string]any)["jq"].(map[string]any)
			if jq["key"] == key && jq["operator"] == op && slicesContain(jq["values"], value) {
				return true
			}
		}
		return false
	}
	if !has(fakeImageQuery, "In", "true") {
		t.Errorf("selector %v does not select images of registry %q", exprs, FakeImageRegistry)
	}
	if !has(".status.containerStatuses.[].state.waiting.reason", "NotIn", ReasonImagePullBackOff) {
		t.Errorf("selector %v matches again the pods it has put in %s", exprs, ReasonImagePullBackOff)
	}
	steps := nested(stage, "spec", "steps").([]any)
	tpl := nested(steps[len(steps)-1].(map[string]any), "patch", "template").(string)
	for _, want := range []string{`$fakeImagePrefix := "fake/"`, "reason: " + ReasonImagePullBackOff, "phase: Pending", "type: Ready"} {
		if !strings.Contains(tpl, want) {
			t.Errorf("status template lacks %q", want)
		}
	}
}

func slicesContain(values any, v string) bool {
	vs, _ := values.([]any)
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// The stages make tools ships, when built, render: kwok's pod-ready is
// still where renderKwokStages looks for it.
func TestRenderShippedKwokStages(t *testing.T) {
	t.Parallel()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "_output", "bin", fileKwokStages))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("make tools has not run")
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := renderKwokStages(data); err != nil {
		t.Fatal(err)
	}
}
