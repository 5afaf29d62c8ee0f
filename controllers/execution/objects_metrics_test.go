package execution

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/telemetry/telemetrytest"
)

// Each write to a member counts once in Karmada's metric of its verb, by
// result, apiVersion, kind and member; reads count nowhere.
// Not parallel: the counters are the process's.
func TestCountWrites(t *testing.T) {
	boom := errors.New("boom")
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetName("web")
	for _, tc := range []struct {
		name   string
		err    error
		write  func(o memberObjects) error
		metric string
		extra  map[string]string
	}{
		{name: "create", write: func(o memberObjects) error {
			_, err := o.create(context.Background(), schema.GroupVersionResource{}, obj)
			return err
		},
			metric: telemetry.CreateResourceToCluster},
		{name: "create refused", err: boom, write: func(o memberObjects) error {
			_, err := o.create(context.Background(), schema.GroupVersionResource{}, obj)
			return err
		}, metric: telemetry.CreateResourceToCluster},
		{name: "update", write: func(o memberObjects) error {
			_, err := o.update(context.Background(), schema.GroupVersionResource{}, obj)
			return err
		},
			metric: telemetry.UpdateResourceToCluster, extra: map[string]string{"operationResult": "updated"}},
		{name: "delete", write: func(o memberObjects) error { return o.delete(context.Background(), schema.GroupVersionResource{}, obj) },
			metric: telemetry.DeleteResourceFromCluster},
		{name: "delete refused", err: boom, write: func(o memberObjects) error { return o.delete(context.Background(), schema.GroupVersionResource{}, obj) },
			metric: telemetry.DeleteResourceFromCluster},
	} {
		t.Run(tc.name, func(t *testing.T) {
			result := "success"
			if tc.err != nil {
				result = "error"
			}
			labels := map[string]string{"result": result, "apiversion": "apps/v1", "kind": "Deployment", "member_cluster": "count-writes"}
			for k, v := range tc.extra {
				labels[k] = v
			}
			counts := map[string]float64{}
			all := []string{telemetry.CreateResourceToCluster, telemetry.UpdateResourceToCluster, telemetry.DeleteResourceFromCluster}
			for _, m := range all {
				counts[m], _ = telemetrytest.Sample(t, m, map[string]string{"member_cluster": "count-writes", "result": result})
			}
			before, _ := telemetrytest.Sample(t, tc.metric, labels)
			written := func(context.Context, schema.GroupVersionResource, *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return obj, tc.err
			}
			o := countWrites("count-writes", memberObjects{create: written, update: written,
				delete: func(context.Context, schema.GroupVersionResource, *unstructured.Unstructured) error { return tc.err }})
			if err := tc.write(o); !errors.Is(err, tc.err) {
				t.Fatalf("write returned %v, want %v", err, tc.err)
			}
			if v, _ := telemetrytest.Sample(t, tc.metric, labels); v != before+1 {
				t.Errorf("%s%v = %v, want %v", tc.metric, labels, v, before+1)
			}
			for _, m := range all {
				if m == tc.metric {
					continue
				}
				if v, _ := telemetrytest.Sample(t, m, map[string]string{"member_cluster": "count-writes", "result": result}); v != counts[m] {
					t.Errorf("%s moved by a %s", m, tc.name)
				}
			}
		})
	}
}
