package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// workloadCustomization interprets the Workload kind of
// samples/workload-interpreter.yaml. The script of GetReplicas reads
// obj.spec.replicas on its line 3, so an object without spec fails there.
const workloadCustomization = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: workload
spec:
  target:
    apiVersion: workload.example.io/v1alpha1
    kind: Workload
  customizations:
    replicaResource:
      luaScript: |
        local kube = require("kube")
        function GetReplicas(obj)
          local replicas = obj.spec.replicas
          return replicas, kube.accuratePodRequirements(obj.spec.template)
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, desiredReplica)
          obj.spec.replicas = desiredReplica
          return obj
        end
    retention:
      luaScript: |
        function Retain(desiredObj, observedObj)
          desiredObj.spec.paused = observedObj.spec.paused
          return desiredObj
        end
    statusAggregation:
      luaScript: |
        function AggregateStatus(desiredObj, statusItems)
          local ready = 0
          for i = 1, #statusItems do
            if statusItems[i].status ~= nil and statusItems[i].status.readyReplicas ~= nil then
              ready = ready + statusItems[i].status.readyReplicas
            end
          end
          desiredObj.status = {readyReplicas = ready}
          return desiredObj
        end
    statusReflection:
      luaScript: |
        function ReflectStatus(observedObj)
          if observedObj.status == nil then
            return nil
          end
          return {readyReplicas = observedObj.status.readyReplicas}
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return observedObj.status ~= nil and observedObj.status.readyReplicas == observedObj.spec.replicas
        end
`

// otherCustomization targets another kind; its GetReplicas is never called.
const otherCustomization = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: other
spec:
  target:
    apiVersion: other.example.io/v1
    kind: Other
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj)
          return 1, nil
        end
`

const desiredWorkload = `apiVersion: workload.example.io/v1alpha1
kind: Workload
metadata:
  name: nginx
  namespace: default
spec:
  replicas: 3
  paused: false
  template:
    spec:
      containers:
      - name: nginx
        image: nginx
        resources:
          requests:
            cpu: 100m
`

// observedWorkload is JSON, which every file may be.
const observedWorkload = `{
  "apiVersion": "workload.example.io/v1alpha1",
  "kind": "Workload",
  "metadata": {"name": "nginx", "namespace": "default"},
  "spec": {"replicas": 2, "paused": true},
  "status": {"readyReplicas": 1}
}`

const statusItems = `- clusterName: member1
  applied: true
  status: {readyReplicas: 2}
- clusterName: member2
  applied: true
  status: {readyReplicas: 1}
- clusterName: member3
  applied: false
`

// writeFiles writes name -> content files into a new temporary directory
// and returns a function that gives a file's path.
func writeFiles(t *testing.T, files map[string]string) func(string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return func(name string) string { return filepath.Join(dir, name) }
}

// runInterpret runs "flotillactl interpret args..." and returns its stdout
// and stderr.
// runInterpret runs interpret with args, with -o yaml unless args choose
// an output (the structured output these tests compare).
func runInterpret(args ...string) (stdout, stderr string, err error) {
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-o") || strings.HasPrefix(a, "--output") }) {
		args = append(args, "-o", "yaml")
	}
	return runInterpretAs(args...)
}

// runInterpretAs runs interpret with exactly args.
func runInterpretAs(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := NewCommand("flotillactl")
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = Execute(context.Background(), cmd, append([]string{"interpret"}, args...))
	return out.String(), errOut.String(), err
}

func TestInterpret(t *testing.T) {
	t.Parallel()
	path := writeFiles(t, map[string]string{
		"ric.yaml":         workloadCustomization,
		"both.yaml":        otherCustomization + "---\n" + workloadCustomization,
		"twice.yaml":       workloadCustomization + "---\n" + strings.Replace(workloadCustomization, "name: workload", "name: workload-2", 1),
		"other.yaml":       otherCustomization,
		"desired.yaml":     desiredWorkload,
		"observed.json":    observedWorkload,
		"status.yaml":      statusItems,
		"nospec.yaml":      "apiVersion: workload.example.io/v1alpha1\nkind: Workload\nmetadata: {name: broken}\n",
		"deploy.yaml":      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1}\n",
		"nokind.yaml":      "metadata: {name: web}\n",
		"typo.yaml":        strings.Replace(workloadCustomization, "replicaResource:\n      luaScript:", "replicaResource:\n      luascript:", 1),
		"status-docs.yaml": "clusterName: member1\nstatus: {readyReplicas: 2}\n---\n# member2\n---\nclusterName: member2\nstatus: {readyReplicas: 2}\n",
		"healthy.yaml":     strings.Replace(observedWorkload, `"readyReplicas": 1`, `"readyReplicas": 2`, 1),
		"syntax.yaml":      strings.Replace(workloadCustomization, "function Retain(desiredObj, observedObj)", "function Retain(desiredObj, observedObj", 1),
	})
	ric, desired, observed := "--customization="+path("ric.yaml"), "--desired-file="+path("desired.yaml"), "--observed-file="+path("observed.json")

	// desiredOut is the desired object as YAML, with the lines of its spec
	// and status given.
	desiredOut := func(spec, status string) string {
		return `apiVersion: workload.example.io/v1alpha1
kind: Workload
metadata:
  name: nginx
  namespace: default
spec:
` + spec + `  template:
    spec:
      containers:
      - image: nginx
        name: nginx
        resources:
          requests:
            cpu: 100m
` + status
	}

	for _, tc := range []struct {
		name    string
		args    []string
		want    string
		wantErr []string
	}{
		{name: "InterpretReplica", args: []string{ric, "--operation=InterpretReplica", desired},
			want: "replicas: 3\nrequires:\n  resourceRequest:\n    cpu: 100m\n"},
		{name: "InterpretReplica as JSON, operation in lower case", args: []string{ric, "--operation=interpretreplica", desired, "-o", "json"},
			want: "{\n  \"replicas\": 3,\n  \"requires\": {\n    \"resourceRequest\": {\n      \"cpu\": \"100m\"\n    }\n  }\n}\n"},
		{name: "InterpretReplica with the customization among others", args: []string{"--customization=" + path("both.yaml"), "--operation=InterpretReplica", desired},
			want: "replicas: 3\nrequires:\n  resourceRequest:\n    cpu: 100m\n"},
		{name: "ReviseReplica", args: []string{ric, "--operation=ReviseReplica", desired, "--desired-replica=5"},
			want: desiredOut("  paused: false\n  replicas: 5\n", "")},
		{name: "Retain keeps the observed spec.paused", args: []string{ric, "--operation=Retain", desired, observed},
			want: desiredOut("  paused: true\n  replicas: 3\n", "")},
		{name: "AggregateStatus sums readyReplicas", args: []string{ric, "--operation=AggregateStatus", desired, "--status-file=" + path("status.yaml")},
			want: desiredOut("  paused: false\n  replicas: 3\n", "status:\n  readyReplicas: 3\n")},
		{name: "AggregateStatus with one item per document", args: []string{ric, "--operation=AggregateStatus", desired, "--status-file=" + path("status-docs.yaml")},
			want: desiredOut("  paused: false\n  replicas: 3\n", "status:\n  readyReplicas: 4\n")},
		{name: "AggregateStatus without items", args: []string{ric, "--operation=AggregateStatus", desired},
			want: desiredOut("  paused: false\n  replicas: 3\n", "status:\n  readyReplicas: 0\n")},
		{name: "InterpretStatus of the observed object", args: []string{ric, "--operation=InterpretStatus", desired, observed},
			want: "readyReplicas: 1\n"},
		{name: "InterpretStatus of the desired object, which has none", args: []string{ric, "--operation=InterpretStatus", desired},
			want: "null\n"},
		{name: "InterpretHealth of the observed object", args: []string{ric, "--operation=InterpretHealth", desired, observed},
			want: "healthy: false\n"},
		{name: "InterpretHealth of a healthy object", args: []string{ric, "--operation=InterpretHealth", desired, "--observed-file=" + path("healthy.yaml")},
			want: "healthy: true\n"},
		{name: "InterpretHealth as JSON", args: []string{ric, "--operation=InterpretHealth", observed, "-o=json"},
			want: "{\n  \"healthy\": false\n}\n"},

		{name: "unknown operation", args: []string{ric, "--operation=Prune", desired},
			wantErr: []string{`unknown operation "Prune"`, "InterpretReplica, InterpretComponent, ReviseReplica, Retain, AggregateStatus, InterpretStatus, InterpretHealth, InterpretDependency"}},
		{name: "customization for another kind", args: []string{"--customization=" + path("other.yaml"), "--operation=InterpretReplica", desired},
			wantErr: []string{"no customization targets workload.example.io/v1alpha1 Workload", "other.example.io/v1 Other (other)"}},
		{name: "object of another kind", args: []string{ric, "--operation=InterpretHealth", "--desired-file=" + path("deploy.yaml")},
			wantErr: []string{"no customization targets apps/v1 Deployment, the kind of the desired object"}},
		{name: "operation not defined", args: []string{ric, "--operation=InterpretDependency", desired},
			wantErr: []string{"does not define InterpretDependency", "spec.customizations.dependencyInterpretation"}},
		{name: "script runtime error", args: []string{ric, "--operation=InterpretReplica", "--desired-file=" + path("nospec.yaml")},
			wantErr: []string{"InterpretReplica of workload.example.io/v1alpha1 Workload broken", "GetReplicas", "luaScript:3"}},
		{name: "script syntax error", args: []string{"--customization=" + path("syntax.yaml"), "--operation=InterpretReplica", desired},
			wantErr: []string{"spec.customizations.retention.luaScript", "Lua syntax error"}},
		{name: "two customizations define one operation", args: []string{"--customization=" + path("twice.yaml"), "--operation=InterpretReplica", desired},
			wantErr: []string{"twice.yaml (document 2)", `invalid ResourceInterpreterCustomization "workload-2"`, "InterpretReplica of workload.example.io/v1alpha1 Workload is already defined by ResourceInterpreterCustomization workload"}},
		{name: "Retain without the observed object", args: []string{ric, "--operation=Retain", desired},
			wantErr: []string{"--observed-file is required for Retain"}},
		{name: "Retain of two kinds", args: []string{ric, "--operation=Retain", desired, "--observed-file=" + path("deploy.yaml")},
			wantErr: []string{"Retain needs objects of one kind: the desired object is workload.example.io/v1alpha1 Workload, the observed object apps/v1 Deployment"}},
		{name: "ReviseReplica without replicas", args: []string{ric, "--operation=ReviseReplica", desired},
			wantErr: []string{"--desired-replica is required"}},
		{name: "object without kind", args: []string{ric, "--operation=InterpretReplica", "--desired-file=" + path("nokind.yaml")},
			wantErr: []string{"needs an apiVersion and a kind"}},
		{name: "customization file that is not one", args: []string{"--customization=" + path("desired.yaml"), "--operation=InterpretReplica", desired},
			wantErr: []string{"desired.yaml", `got apiVersion "workload.example.io/v1alpha1" kind "Workload", want a config.karmada.io/v1alpha1 ResourceInterpreterCustomization`}},
		{name: "customization with a misspelt field", args: []string{"--customization=" + path("typo.yaml"), "--operation=InterpretReplica", desired},
			wantErr: []string{"typo.yaml", `unknown field "spec.customizations.replicaResource.luascript"`}},
		{name: "missing file", args: []string{"--customization=" + path("missing.yaml"), "--operation=InterpretReplica", desired},
			wantErr: []string{"missing.yaml", "no such file"}},
		{name: "unknown output", args: []string{ric, "--operation=InterpretReplica", desired, "-o", "wide"},
			wantErr: []string{`unknown output format "wide"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, err := runInterpret(tc.args...)
			if len(tc.wantErr) > 0 {
				mustContain(t, err, tc.wantErr...)
				if out != "" {
					t.Errorf("a failed run printed %q", out)
				}
				if !strings.HasPrefix(errOut, "error: ") {
					t.Errorf("the error is not reported on stderr: %q", errOut)
				}
				return
			}
			if err != nil {
				t.Fatalf("interpret: %v\n%s", err, errOut)
			}
			if out != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", out, tc.want)
			}
		})
	}
}

// TestInterpretAsKarmadactl: karmadactl's flags and output: -f, the
// operation in any case, one block per named result, --check's report,
// --show-doc, and --edit refused.
func TestInterpretAsKarmadactl(t *testing.T) {
	t.Parallel()
	path := writeFiles(t, map[string]string{
		"ric.yaml":     workloadCustomization,
		"broken.yaml":  strings.Replace(workloadCustomization, "function GetReplicas(obj)\n", "function GetReplicas(obj\n", 1),
		"desired.yaml": desiredWorkload,
	})
	out, _, err := runInterpretAs("-f", path("ric.yaml"), "--operation", "interpretReplica", "--desired-file", path("desired.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "---\n# [1/2] replica:\n") || !strings.Contains(out, "---\n# [2/2] requires:\n") {
		t.Errorf("blocks:\n%s", out)
	}

	out, _, err = runInterpretAs("-f", path("ric.yaml"), "--check")
	if err != nil {
		t.Fatalf("--check of a good customization: %v\n%s", err, out)
	}
	for _, want := range []string{"SOURCE: workload", "TARGET: workload.example.io/v1alpha1 Workload", "RULERS:", "InterpretReplica:", "PASS", "UNSET"} {
		if !strings.Contains(out, want) {
			t.Errorf("--check report lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runInterpretAs("-f", path("broken.yaml"), "--check")
	if err == nil || !regexp.MustCompile(`InterpretReplica:\s+ERROR: `).MatchString(out) {
		t.Errorf("--check of a script that does not compile: %v\n%s", err, out)
	}
	out, _, err = runInterpretAs("--show-doc")
	if err != nil || !strings.Contains(out, "GetReplicas(desiredObj)") || !strings.Contains(out, "Retain(desiredObj, observedObj)") {
		t.Errorf("--show-doc: %v\n%s", err, out)
	}
	if _, _, err := runInterpretAs("-f", path("ric.yaml"), "--edit"); err == nil || !strings.Contains(err.Error(), "--edit") {
		t.Errorf("--edit: %v", err)
	}
}
