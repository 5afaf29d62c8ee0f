package table

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kjson "sigs.k8s.io/json"
)

// TestDecodeObjectMatchesSerializer checks that decodeObject decodes every
// object exactly as sigs.k8s.io/json, kube-apiserver's decoder, does, and
// fails on the same objects.
func TestDecodeObjectMatchesSerializer(t *testing.T) {
	now := time.Now()
	type object struct {
		name string
		gvk  schema.GroupVersionKind
		raw  string
	}
	objects := []object{
		{"running pod", podGVK, string(mustJSON(t, kwokPod(now, "default", "a", podOptions{containers: 2, ready: 2, restarts: 4, restartedAgo: time.Minute})))},
		{"pending pod", podGVK, string(mustJSON(t, kwokPod(now, "default", "b", podOptions{containers: 1, pending: true})))},
		{"deployment", deploymentGVK, string(mustJSON(t, webDeployment(now)))},
		{"node", nodeGVK, string(mustJSON(t, controlPlaneNode(now)))},
		{"nulls and empties", podGVK, `{"metadata":{"name":"x","labels":null,"annotations":{},"finalizers":[]},"spec":{"containers":null,"initContainers":[],"nodeName":null},"status":null}`},
		{"escapes", podGVK, `{"metadata":{"name":"caf\u00e9\n\"q\"","annotations":{"k\/1":"\ud83d\ude00 <b>&amp;"}}}`},
		{"times", podGVK, `{"metadata":{"name":"t","creationTimestamp":"2026-01-01T10:00:00+02:00","deletionTimestamp":"2026-01-01T00:00:00.123456Z"},"status":{"startTime":null}}`},
		{"micro time", schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, `{"metadata":{"name":"e"},"eventTime":"2026-01-01T00:00:00.123456Z","series":{"count":2,"lastObservedTime":"2026-01-01T00:00:01.000001Z"}}`},
		{"quantities and int-or-string", podGVK, `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"100m","memory":"1.5Gi","example.com/gpu":2}},"ports":[{"containerPort":80}],"readinessProbe":{"httpGet":{"port":"http"}},"livenessProbe":{"httpGet":{"port":8080}}}]}}`},
		{"big integers", podGVK, `{"metadata":{"name":"n","generation":9007199254740993,"resourceVersion":"18446744073709551615"},"spec":{"activeDeadlineSeconds":9223372036854775807}}`},
		{"unknown and miscased fields", podGVK, `{"Metadata":{"name":"ignored"},"metadata":{"name":"kept","Name":"miscased"},"extra":{"nested":[1,2.5,{"a":null}],"s":"x"}}`},
		{"duplicate keys", podGVK, `{"metadata":{"name":"first","name":"second"}}`},
		{"secret data", schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, `{"metadata":{"name":"s"},"data":{"a":"MQ==","b":""},"stringData":{"c":"3"},"type":"Opaque"}`},
		{"raw extension", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ControllerRevision"}, `{"metadata":{"name":"r"},"data":{"spec":{"template":{"x":[1,{"y":null}]}}},"revision":3}`},
		{"service", schema.GroupVersionKind{Version: "v1", Kind: "Service"}, `{"metadata":{"name":"svc"},"spec":{"ports":[{"port":80,"targetPort":"web"},{"port":443,"targetPort":8443}],"clusterIPs":["10.0.0.1","fd00::1"]}}`},
		{"bad time", podGVK, `{"metadata":{"name":"t","creationTimestamp":"yesterday"}}`},
		{"time as a number", podGVK, `{"metadata":{"name":"t","creationTimestamp":12}}`},
		{"exponent in an integer", podGVK, `{"status":{"containerStatuses":[{"name":"c","restartCount":1e2}]}}`},
		{"fraction in an integer", podGVK, `{"status":{"containerStatuses":[{"name":"c","restartCount":1.0}]}}`},
		{"overflowing integer", podGVK, `{"status":{"containerStatuses":[{"name":"c","restartCount":2147483648}]}}`},
		{"string for a number", podGVK, `{"status":{"containerStatuses":[{"name":"c","restartCount":"1"}]}}`},
		{"number for a string", podGVK, `{"metadata":{"name":5}}`},
		{"bad base64", schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, `{"data":{"a":"not base64!"}}`},
		{"trailing bytes", podGVK, `{"metadata":{"name":"x"}} {}`},
		{"truncated", podGVK, `{"metadata":{"name":"x"`},
		{"invalid inside an unknown field", podGVK, `{"extra":[1,,2],"metadata":{"name":"x"}}`},
		{"not an object", podGVK, `["metadata"]`},
	}
	for _, tt := range objects {
		t.Run(tt.name, func(t *testing.T) {
			for _, into := range []func() any{
				func() any { return newObject(t, tt.gvk) },
				func() any { return &metav1.PartialObjectMetadata{} },
			} {
				want, got := into(), into()
				wantErr := kjson.UnmarshalCaseSensitivePreserveInts([]byte(tt.raw), want)
				gotErr := decodeObject([]byte(tt.raw), got)
				if (wantErr == nil) != (gotErr == nil) {
					t.Fatalf("%T: decodeObject error %v, sigs.k8s.io/json error %v", got, gotErr, wantErr)
				}
				if wantErr != nil {
					continue
				}
				if !reflect.DeepEqual(want, got) {
					t.Errorf("%T decoded differently (-sigs.k8s.io/json +decodeObject):\n%s", got, cmp.Diff(want, got))
				}
			}
		})
	}
}

// newObject returns a new versioned object of kind gvk.
func newObject(t *testing.T, gvk schema.GroupVersionKind) runtime.Object {
	t.Helper()
	obj, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		t.Fatalf("new %s: %v", gvk, err)
	}
	return obj
}
