package drift

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// obj decodes a JSON object as unstructured content (numbers as int64 or
// float64, as apimachinery's decoder gives them).
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return ints(out).(map[string]any)
}

func ints(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = ints(e)
		}
	case []any:
		for i, e := range x {
			x[i] = ints(e)
		}
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

const deployment = `{"apiVersion":"apps/v1","kind":"Deployment",
 "metadata":{"name":"nginx","namespace":"default","labels":{"app":"nginx"},
   "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}},
 "spec":{"replicas":3,"selector":{"matchLabels":{"app":"nginx"}},
   "template":{"metadata":{"labels":{"app":"nginx"}},
     "spec":{"containers":[
       {"name":"nginx","image":"nginx:1.27","args":["-g","daemon off;"],
        "resources":{"requests":{"cpu":"500m","memory":"1Gi"}},"ports":[{"containerPort":80}]},
       {"name":"sidecar","image":"busybox:1.36"}]}}}}`

// member is what a member returns for deployment: defaults and status
// added, quantities canonical, containers in another order.
const member = `{"apiVersion":"apps/v1","kind":"Deployment",
 "metadata":{"name":"nginx","namespace":"default","uid":"u1","resourceVersion":"7","generation":2,
   "labels":{"app":"nginx","added-in-member":"x"},"annotations":{"team":"a","deployment.kubernetes.io/revision":"1"}},
 "spec":{"replicas":3,"progressDeadlineSeconds":600,"selector":{"matchLabels":{"app":"nginx"}},
   "template":{"metadata":{"labels":{"app":"nginx"}},
     "spec":{"restartPolicy":"Always","containers":[
       {"name":"sidecar","image":"busybox:1.36","imagePullPolicy":"IfNotPresent"},
       {"name":"nginx","image":"nginx:1.27","args":["-g","daemon off;"],"terminationMessagePath":"/dev/termination-log",
        "resources":{"requests":{"cpu":"0.5","memory":"1024Mi"}},"ports":[{"containerPort":80,"protocol":"TCP"}]}]}}},
 "status":{"replicas":3}}`

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name     string
		applied  string
		member   string
		edit     func(m map[string]any)
		opts     Options
		want     []workv1alpha1.DriftedField
		omitted  int
		drifted  bool
		wantPath string
	}{{
		name:    "defaults, status, identity, extra labels and canonical quantities are not drift",
		applied: deployment, member: member,
	}, {
		name:    "replicas changed in the member",
		applied: deployment, member: member,
		edit:    func(m map[string]any) { spec(m)["replicas"] = int64(5) },
		want:    []workv1alpha1.DriftedField{{Path: "spec.replicas", ValueInMember: "5", ValueApplied: "3"}},
		drifted: true,
	}, {
		name:    "a container's image, found by name",
		applied: deployment, member: member,
		edit: func(m map[string]any) {
			containers(m)[1].(map[string]any)["image"] = "nginx:1.28"
		},
		want:    []workv1alpha1.DriftedField{{Path: "spec.template.spec.containers[name=nginx].image", ValueInMember: `"nginx:1.28"`, ValueApplied: `"nginx:1.27"`}},
		drifted: true,
	}, {
		name:    "a quantity changed in amount",
		applied: deployment, member: member,
		edit: func(m map[string]any) {
			containers(m)[1].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["cpu"] = "1"
		},
		want:    []workv1alpha1.DriftedField{{Path: "spec.template.spec.containers[name=nginx].resources.requests.cpu", ValueInMember: `"1"`, ValueApplied: `"500m"`}},
		drifted: true,
	}, {
		name:    "a scalar list is owned whole",
		applied: deployment, member: member,
		edit: func(m map[string]any) {
			containers(m)[1].(map[string]any)["args"] = []any{"-g"}
		},
		want:    []workv1alpha1.DriftedField{{Path: "spec.template.spec.containers[name=nginx].args", ValueInMember: `["-g"]`, ValueApplied: `["-g","daemon off;"]`}},
		drifted: true,
	}, {
		name:    "a container removed in the member",
		applied: deployment, member: member,
		edit: func(m map[string]any) {
			c := containers(m)
			m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"] = c[1:]
		},
		want:    []workv1alpha1.DriftedField{{Path: "spec.template.spec.containers[name=sidecar]", ValueInMember: Absent, ValueApplied: `{"image":"busybox:1.36","name":"sidecar"}`}},
		drifted: true,
	}, {
		name:    "the member has no annotations at all: only the owned one is missing, not kubectl's copy",
		applied: deployment, member: member,
		edit: func(m map[string]any) {
			delete(m["metadata"].(map[string]any), "annotations")
		},
		want:    []workv1alpha1.DriftedField{{Path: "metadata.annotations", ValueInMember: Absent, ValueApplied: `{"team":"a"}`}},
		drifted: true,
	}, {
		name:    "an owned label and annotation changed; last-applied is not owned",
		applied: deployment, member: member,
		edit: func(m map[string]any) {
			md := m["metadata"].(map[string]any)
			md["labels"].(map[string]any)["app"] = "web"
			delete(md["annotations"].(map[string]any), "team")
		},
		want: []workv1alpha1.DriftedField{
			{Path: "metadata.annotations.team", ValueInMember: Absent, ValueApplied: `"a"`},
			{Path: "metadata.labels.app", ValueInMember: `"web"`, ValueApplied: `"nginx"`},
		},
		drifted: true,
	}, {
		// The caller compares the manifest after Retain, which copied the
		// fields the member keeps from the member object.
		name: "retained paths are the member's",
		applied: func() string {
			a := obj(t, deployment)
			spec(a)["replicas"] = int64(9)
			containers(a)[0].(map[string]any)["image"] = "nginx:1.28"
			b, _ := json.Marshal(a)
			return string(b)
		}(),
		member: member,
		edit: func(m map[string]any) {
			spec(m)["replicas"] = int64(9)
			containers(m)[1].(map[string]any)["image"] = "nginx:1.28"
		},
	}, {
		name:    "the report is bounded and counts what it left out",
		applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","b":"2","c":"3"}}`,
		member:  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"x","b":"y","c":"z"}}`,
		opts:    Options{MaxFields: 2},
		want: []workv1alpha1.DriftedField{
			{Path: "data.a", ValueInMember: `"x"`, ValueApplied: `"1"`},
			{Path: "data.b", ValueInMember: `"y"`, ValueApplied: `"2"`},
		},
		omitted: 1, drifted: true, wantPath: "data.a, data.b, (+1 more)",
	}, {
		name:    "a Secret's stringData is compared as stored, and its values masked",
		applied: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"password":"hunter2"},"data":{"user":"YWRtaW4="}}`,
		member:  `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"Opaque","data":{"password":"aHVudGVyMg==","user":"cm9vdA=="}}`,
		want:    []workv1alpha1.DriftedField{{Path: "data.user", ValueInMember: Masked, ValueApplied: Masked}},
		drifted: true,
	}, {
		name:    "an unchanged Secret with stringData is not drift",
		applied: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"password":"hunter2"}}`,
		member:  `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"Opaque","data":{"password":"aHVudGVyMg=="}}`,
	}, {
		name:    "a whole owned field missing, and a type change",
		applied: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"selector":{"app":"a"},"ports":[{"port":80}]}}`,
		member:  `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":"80","clusterIP":"10.0.0.1"}}`,
		want: []workv1alpha1.DriftedField{
			{Path: "spec.ports", ValueInMember: `"80"`, ValueApplied: `[{"port":80}]`},
			{Path: "spec.selector", ValueInMember: Absent, ValueApplied: `{"app":"a"}`},
		},
		drifted: true,
	}, {
		name:    "lists of unnamed objects are compared item by item",
		applied: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80},{"port":443}]}}`,
		member:  `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80,"protocol":"TCP"},{"port":8443,"protocol":"TCP"}]}}`,
		want:    []workv1alpha1.DriftedField{{Path: "spec.ports[1].port", ValueInMember: "8443", ValueApplied: "443"}},
		drifted: true,
	}, {
		name:    "numbers compare by value, a float and an integer alike",
		applied: `{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},"spec":{"ratio":2.0,"n":1}}`,
		member:  `{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},"spec":{"ratio":2,"n":1.0}}`,
	}, {
		name:    "empty applied values match absent ones, as the API server drops them",
		applied: `{"apiVersion":"v1","kind":"X","metadata":{"name":"x","labels":{}},"spec":{"template":{"metadata":{"creationTimestamp":null}},"resources":{},"args":[],"paused":false,"name":"","n":0}}`,
		member:  `{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},"spec":{"template":{"metadata":{}},"args":null}}`,
	}, {
		name:    "image tags are strings, not quantities",
		applied: `{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},"spec":{"tag":"1.0"}}`,
		member:  `{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},"spec":{"tag":"1"}}`,
		want:    []workv1alpha1.DriftedField{{Path: "spec.tag", ValueInMember: `"1"`, ValueApplied: `"1.0"`}},
		drifted: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			a, m := obj(t, tc.applied), obj(t, tc.member)
			if tc.edit != nil {
				tc.edit(m)
			}
			r := Compare(a, m, tc.opts)
			if !reflect.DeepEqual(r.Fields, tc.want) {
				t.Errorf("fields:\n got %+v\nwant %+v", r.Fields, tc.want)
			}
			if r.Omitted != tc.omitted {
				t.Errorf("omitted %d, want %d", r.Omitted, tc.omitted)
			}
			if r.Drifted() != tc.drifted {
				t.Errorf("drifted %t, want %t", r.Drifted(), tc.drifted)
			}
			if tc.wantPath != "" && r.Paths() != tc.wantPath {
				t.Errorf("paths %q, want %q", r.Paths(), tc.wantPath)
			}
		})
	}
}

// TestCompareLeavesInputsAlone: the applied manifest and the member object
// come from shared caches; Compare must not change them.
func TestCompareLeavesInputsAlone(t *testing.T) {
	a := obj(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"p":"x"}}`)
	m := obj(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"p":"eQ=="}}`)
	before, _ := json.Marshal([]any{a, m})
	if r := Compare(a, m, Options{}); !r.Drifted() {
		t.Fatal("no drift found for a changed Secret")
	}
	after, _ := json.Marshal([]any{a, m})
	if string(before) != string(after) {
		t.Errorf("inputs changed:\n%s\n%s", before, after)
	}
}

// TestPathCut: a path longer than a Work's status accepts is cut to fit.
func TestPathCut(t *testing.T) {
	key := strings.Repeat("k", workv1alpha1.MaxDriftedFieldLength)
	r := Compare(map[string]any{"data": map[string]any{key: "a"}}, map[string]any{"data": map[string]any{key: "b"}}, Options{})
	if len(r.Fields) != 1 || len(r.Fields[0].Path) > workv1alpha1.MaxDriftedFieldLength || !strings.HasPrefix(r.Fields[0].Path, "data.kkk") {
		t.Errorf("path not cut to %d bytes: %d", workv1alpha1.MaxDriftedFieldLength, len(r.Fields[0].Path))
	}
}

// TestValuesCut: a long value is cut in the report.
func TestValuesCut(t *testing.T) {
	long := make([]byte, 1000)
	for i := range long {
		long[i] = 'x'
	}
	r := Compare(map[string]any{"data": map[string]any{"k": string(long)}}, map[string]any{"data": map[string]any{"k": "y"}}, Options{})
	if len(r.Fields) != 1 || len(r.Fields[0].ValueApplied) > maxValueLength+len("…") {
		t.Errorf("value not cut: %d bytes", len(r.Fields[0].ValueApplied))
	}
}

func spec(m map[string]any) map[string]any { return m["spec"].(map[string]any) }

func containers(m map[string]any) []any {
	return spec(m)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
}
