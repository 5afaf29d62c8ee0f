package multiget

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
)

func options(args ...string) (*GetOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	o := NewGetOptions(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "-o":
			*o.PrintFlags.OutputFormat = args[i+1]
		case "-A":
			o.AllNamespaces = args[i+1] == "true"
		case "--show-labels":
			*o.PrintFlags.HumanReadableFlags.ShowLabels = args[i+1] == "true"
		}
	}
	return o, &out, &errOut
}

// outcome is what read returns for a target: the infos and, decoded, their
// tables.
func outcome(t *testing.T, cluster string, infos ...*resource.Info) Outcome[read] {
	t.Helper()
	v := read{infos: infos}
	for _, i := range infos {
		table, err := DecodeTable(i.Object, time.Now(), false)
		if err != nil {
			t.Fatal(err)
		}
		v.tables = append(v.tables, table)
	}
	return Outcome[read]{Target: Target{Cluster: cluster, ControlPlane: cluster == ControlPlaneName}, Value: v}
}

func info(mapping *meta.RESTMapping, obj *unstructured.Unstructured) *resource.Info {
	return &resource.Info{Mapping: mapping, Object: obj}
}

// TestPrintTables: one table per resource over all clusters, CLUSTER
// after NAME and ADOPTION last, printed by kubectl's printer (so -A adds
// NAMESPACE, wide shows the wide columns and two kinds prefix the names
// with the kind); pods hide ADOPTION unless wide; DRIFT shows only wide.
func TestPrintTables(t *testing.T) {
	t.Parallel()
	outcomes := func() []Outcome[read] {
		return []Outcome[read]{
			outcome(t, ControlPlaneName, info(deployments, serverTable(t, deploymentColumns, row{namespace: "ns", name: "web", cells: []interface{}{"3/3", "5m", "nginx"}}))),
			outcome(t, "member1",
				info(deployments, serverTable(t, deploymentColumns, row{namespace: "ns", name: "web", labels: managed, cells: []interface{}{"2/2", "5m", "nginx"}})),
				info(pods, serverTable(t, podColumns, row{namespace: "ns", name: "web-1", cells: []interface{}{"Running", "n1"}}))),
			outcome(t, "member2", info(deployments, serverTable(t, deploymentColumns,
				row{namespace: "ns", name: "web", labels: managed, cells: []interface{}{"1/1", "5m", "nginx"}},
				row{namespace: "other", name: "local", cells: []interface{}{"1/1", "9d", "busybox"}}))),
		}
	}
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{name: "default", want: `NAME                    CLUSTER   READY   AGE   ADOPTION
deployment.apps/web     Karmada   3/3     5m    -
deployment.apps/web     member1   2/2     5m    Y
deployment.apps/web     member2   1/1     5m    Y
deployment.apps/local   member2   1/1     9d    N

NAME        CLUSTER   STATUS
pod/web-1   member1   Running
`},
		{name: "all namespaces, wide", flags: []string{"-A", "true", "-o", "wide"}, want: `NAMESPACE   NAME                    CLUSTER   READY   AGE   IMAGES    ADOPTION   DRIFT
ns          deployment.apps/web     Karmada   3/3     5m    nginx     -          -
ns          deployment.apps/web     member1   2/2     5m    nginx     Y          -
ns          deployment.apps/web     member2   1/1     5m    nginx     Y          -
other       deployment.apps/local   member2   1/1     9d    busybox   N          -

NAMESPACE   NAME        CLUSTER   STATUS    NODE   ADOPTION   DRIFT
ns          pod/web-1   member1   Running   n1     N          -
`},
		{name: "one kind", flags: []string{"one-kind", ""}, want: `NAME    CLUSTER   READY   AGE   ADOPTION
web     Karmada   3/3     5m    -
web     member1   2/2     5m    Y
web     member2   1/1     5m    Y
local   member2   1/1     9d    N
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, out, errOut := options(tc.flags...)
			in := outcomes()
			if len(tc.flags) > 0 && tc.flags[0] == "one-kind" {
				in[1].Value.infos, in[1].Value.tables = in[1].Value.infos[:1], in[1].Value.tables[:1]
			}
			if err := o.printTables(in, parts(in), "ns"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if errOut.Len() > 0 {
				t.Errorf("stderr: %s", errOut)
			}
		})
	}
}

func TestPrintTablesNothingFound(t *testing.T) {
	t.Parallel()
	o, out, errOut := options()
	failed := outcome(t, "member2")
	failed.Err = timeoutError{}
	in := []Outcome[read]{outcome(t, "member1", info(deployments, serverTable(t, deploymentColumns))), failed}
	if err := o.printTables(in, parts(in), "ns"); err != nil {
		t.Fatal(err)
	}
	if out.Len() > 0 || errOut.String() != "No resources found in ns namespace.\n" {
		t.Errorf("stdout %q stderr %q, want kubectl's notice", out, errOut)
	}
	o, _, errOut = options()
	in = []Outcome[read]{failed}
	if err := o.printTables(in, parts(in), "ns"); err != nil || errOut.Len() > 0 {
		t.Errorf("nothing read: %v %q, want no notice (the warning says why)", err, errOut)
	}
}

// object is a member or control-plane object as the builder returns it
// for -o json|yaml|name.
func object(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("ns")
	u.SetName(name)
	return u
}

func TestPrintObjects(t *testing.T) {
	t.Parallel()
	outcomes := func() []Outcome[read] {
		return []Outcome[read]{
			outcome(t, ControlPlaneName, info(deployments, object("web"))),
			outcome(t, "member1", info(deployments, object("web")), info(deployments, object("other"))),
		}
	}
	o, out, _ := options("-o", "name")
	if err := o.printObjects(outcomes()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "deployment.apps/web\ndeployment.apps/web\ndeployment.apps/other\n" {
		t.Errorf("-o name:\n%s", out)
	}

	o, out, _ = options("-o", "json")
	in := outcomes()
	if err := o.printObjects(in); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind  string
		Items []unstructured.Unstructured
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatalf("-o json is not one JSON document: %v\n%s", err, out)
	}
	var got []string
	for _, it := range list.Items {
		got = append(got, it.GetName()+"@"+it.GetAnnotations()["resource.karmada.io/cached-from-cluster"])
	}
	if list.Kind != "List" || !cmp.Equal(got, []string{"web@", "web@member1", "other@member1"}) {
		t.Errorf("-o json: kind %s items %v, want one List with member objects annotated with their cluster", list.Kind, got)
	}
	if len(in[1].Value.infos[0].Object.(*unstructured.Unstructured).GetAnnotations()) != 0 {
		t.Error("printing annotated the object read")
	}

	// One object named in one cluster prints as itself, as in kubectl.
	o, out, _ = options("-o", "yaml")
	single := outcome(t, "member1", info(deployments, object("web")))
	single.Value.singleItem = true
	if err := o.printObjects([]Outcome[read]{single}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "apiVersion: apps/v1\nkind: Deployment\n") {
		t.Errorf("-o yaml of one object:\n%s", out)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		set   func(o *GetOptions)
		args  []string
		error string
	}{
		{name: "no resource type", error: "you must specify the type of resource to get"},
		{name: "watch events without watch", args: []string{"pods"}, set: func(o *GetOptions) { o.OutputWatchEvents = true },
			error: "--output-watch-events option can only be used with --watch or --watch-only"},
		{name: "labels with json", args: []string{"pods"}, set: func(o *GetOptions) {
			*o.PrintFlags.HumanReadableFlags.ShowLabels = true
			*o.PrintFlags.OutputFormat = "json"
		}, error: "--show-labels option cannot be used with json printer"},
		{name: "bad output", args: []string{"pods"}, set: func(o *GetOptions) { *o.PrintFlags.OutputFormat = "xml" }, error: `unable to match a printer suitable for the output format "xml"`},
		{name: "negative timeout", args: []string{"pods"}, set: func(o *GetOptions) { o.Selection.Timeout = -1 }, error: "--member-timeout must not be negative"},
		{name: "fine", args: []string{"pods"}, set: func(o *GetOptions) { *o.PrintFlags.OutputFormat = "wide" }},
	} {
		o, _, _ := options()
		if tc.set != nil {
			tc.set(o)
		}
		err := o.Validate(tc.args)
		if (tc.error == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.error)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.error)
		}
	}
}
