package overrides

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// TestApplyArgsAddThenRemove: an args overrider adds a flag to a container's
// args, and the same overrider with operator remove takes it away again.
func TestApplyArgsAddThenRemove(t *testing.T) {
	t.Parallel()
	obj := deployment()
	add := policyv1alpha1.CommandArgsOverrider{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"--parameter1=foo"}}
	if err := applyCommandArgs(obj, "args", &add); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"--port=80", "--parameter1=foo"}, nginxArgs(t, obj)); diff != "" {
		t.Errorf("after add (-want +got):\n%s", diff)
	}
	remove := add
	remove.Operator = policyv1alpha1.OverriderOpRemove
	if err := applyCommandArgs(obj, "args", &remove); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"--port=80"}, nginxArgs(t, obj)); diff != "" {
		t.Errorf("after remove (-want +got):\n%s", diff)
	}
}

func TestApplyCommandArgs(t *testing.T) {
	t.Parallel()
	// pod has containers a (command [sh -c x -c]), b (no command) and a
	// second container named a (command [run]).
	pod := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
			"spec": map[string]any{"containers": []any{
				map[string]any{"name": "a", "image": "x", "command": []any{"sh", "-c", "x", "-c"}},
				map[string]any{"name": "b", "image": "x"},
				map[string]any{"name": "a", "image": "x", "command": []any{"run"}},
			}},
		}}
	}
	commands := func(t *testing.T, obj *unstructured.Unstructured) []any {
		t.Helper()
		cs, err := containers(obj)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]any, 0, len(cs))
		for _, c := range cs {
			out = append(out, c["command"])
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		o       policyv1alpha1.CommandArgsOverrider
		want    []any
		wantErr bool
	}{
		{
			name: "add appends to every container of that name",
			o:    policyv1alpha1.CommandArgsOverrider{ContainerName: "a", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"-v", "1"}},
			want: []any{[]any{"sh", "-c", "x", "-c", "-v", "1"}, nil, []any{"run", "-v", "1"}},
		},
		{
			name: "add creates the field",
			o:    policyv1alpha1.CommandArgsOverrider{ContainerName: "b", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"serve"}},
			want: []any{[]any{"sh", "-c", "x", "-c"}, []any{"serve"}, []any{"run"}},
		},
		{
			name: "remove drops every occurrence",
			o:    policyv1alpha1.CommandArgsOverrider{ContainerName: "a", Operator: policyv1alpha1.OverriderOpRemove, Value: []string{"-c", "absent"}},
			want: []any{[]any{"sh", "x"}, nil, []any{"run"}},
		},
		{
			// Karmada patches the missing field with the (empty) result.
			name: "remove on a missing field sets it empty",
			o:    policyv1alpha1.CommandArgsOverrider{ContainerName: "b", Operator: policyv1alpha1.OverriderOpRemove, Value: []string{"x"}},
			want: []any{[]any{"sh", "-c", "x", "-c"}, []any{}, []any{"run"}},
		},
		{
			name: "unknown container",
			o:    policyv1alpha1.CommandArgsOverrider{ContainerName: "z", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"x"}},
			want: []any{[]any{"sh", "-c", "x", "-c"}, nil, []any{"run"}},
		},
		{
			name: "replace is not an operator of command",
			o:    policyv1alpha1.CommandArgsOverrider{ContainerName: "a", Operator: policyv1alpha1.OverriderOpReplace, Value: []string{"x"}},
			want: []any{[]any{"sh", "-c", "x", "-c"}, nil, []any{"run"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := pod()
			if err := applyCommandArgs(obj, "command", &tc.o); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, commands(t, obj)); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyCommandArgsKindsAndErrors(t *testing.T) {
	t.Parallel()
	add := &policyv1alpha1.CommandArgsOverrider{ContainerName: "app", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"x"}}

	job := workload(t, "batch/v1", "Job", "spec", "template", "spec", "containers")
	if err := applyCommandArgs(job, "command", add); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "containers"); !cmp.Equal(got[0].(map[string]any)["command"], []any{"x"}) {
		t.Errorf("Job containers = %v", got)
	}

	cronPath := []string{"spec", "jobTemplate", "spec", "template", "spec", "containers"}
	cron := workload(t, "batch/v1", "CronJob", cronPath...)
	if err := applyCommandArgs(cron, "command", add); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedSlice(cron.Object, cronPath...); got[0].(map[string]any)["command"] != nil {
		t.Errorf("CronJob changed: %v", got)
	}

	bad := workload(t, "v1", "Pod", "spec", "containers")
	if err := unstructured.SetNestedSlice(bad.Object, []any{map[string]any{"name": "app", "args": "not-a-list"}}, "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if err := applyCommandArgs(bad, "args", add); err == nil {
		t.Error("args not a list: no error")
	}
}
