package mutation

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func mustObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(doc)); err != nil {
		t.Fatalf("bad test object %s: %v", doc, err)
	}
	return obj
}

func TestPruneManifest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "server-populated metadata and status",
			in: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n",
				"creationTimestamp":"2026-01-01T00:00:00Z","deletionTimestamp":"2026-01-01T00:00:00Z","deletionGracePeriodSeconds":30,
				"generation":3,"managedFields":[{"manager":"kubectl"}],"resourceVersion":"5","selfLink":"/x","uid":"u",
				"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"q"}],"finalizers":["f"],
				"labels":{"a":"b"},"annotations":{"c":"d"}},"data":{"k":"v"},"status":{"x":1}}`,
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n","labels":{"a":"b"},"annotations":{"c":"d"}},"data":{"k":"v"}}`,
		},
		{
			name: "deployment revision annotations",
			in: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","annotations":{
				"deployment.kubernetes.io/revision":"3","deployment.kubernetes.io/revision-history":"1,2","keep":"me"}},"spec":{"replicas":2}}`,
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","annotations":{"keep":"me"}},"spec":{"replicas":2}}`,
		},
		{
			name: "job generated selector and ttl",
			in: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"ttlSecondsAfterFinished":100,
				"selector":{"matchLabels":{"controller-uid":"u","batch.kubernetes.io/controller-uid":"u"}},
				"template":{"metadata":{"labels":{"controller-uid":"u","batch.kubernetes.io/controller-uid":"u","job-name":"j","batch.kubernetes.io/job-name":"j","app":"x"}}}}}`,
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{
				"template":{"metadata":{"labels":{"app":"x"}}}}}`,
		},
		{
			name: "job with manual selector keeps its labels but loses ttl",
			in: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"manualSelector":true,"ttlSecondsAfterFinished":100,
				"selector":{"matchLabels":{"controller-uid":"u"}},"template":{"metadata":{"labels":{"controller-uid":"u","job-name":"j"}}}}}`,
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"manualSelector":true,
				"selector":{"matchLabels":{"controller-uid":"u"}},"template":{"metadata":{"labels":{"controller-uid":"u","job-name":"j"}}}}}`,
		},
		{
			name: "service cluster IPs",
			in:   `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"],"ports":[{"port":80}]}}`,
			want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`,
		},
		{
			name: "headless service keeps None",
			in:   `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"None","clusterIPs":["None"]}}`,
			want: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"None","clusterIPs":["None"]}}`,
		},
		{
			name: "service account token secrets",
			in:   `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"},"secrets":[{"name":"sa-token-abc"},{"name":"other"},{"name":"sa-token-def"}]}`,
			want: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"},"secrets":[{"name":"other"}]}`,
		},
		{
			name: "service account token secret",
			in: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"t","annotations":{"kubernetes.io/service-account.name":"sa",
				"kubernetes.io/service-account.uid":"u"}},"type":"kubernetes.io/service-account-token","data":{"token":"eA=="}}`,
			want: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"t","annotations":{"kubernetes.io/service-account.name":"sa"}},
				"type":"kubernetes.io/service-account-token"}`,
		},
		{
			name: "opaque secret keeps its data",
			in:   `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"t"},"type":"Opaque","data":{"k":"eA=="}}`,
			want: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"t"},"type":"Opaque","data":{"k":"eA=="}}`,
		},
		{
			name: "pvc selected node",
			in:   `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"p","annotations":{"volume.kubernetes.io/selected-node":"n1"}}}`,
			want: `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"p"}}`,
		},
		{
			name: "a Deployment of another group is not a Deployment",
			in:   `{"apiVersion":"example.com/v1","kind":"Deployment","metadata":{"name":"d","annotations":{"deployment.kubernetes.io/revision":"3"}}}`,
			want: `{"apiVersion":"example.com/v1","kind":"Deployment","metadata":{"name":"d","annotations":{"deployment.kubernetes.io/revision":"3"}}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := mustObject(t, tc.in)
			if err := PruneManifest(obj); err != nil {
				t.Fatalf("PruneManifest: %v", err)
			}
			want := mustObject(t, tc.want)
			if !reflect.DeepEqual(want.Object, obj.Object) {
				got, _ := json.Marshal(obj.Object)
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestPruneManifestRejectsMalformedFields(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"job manualSelector not a bool", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"manualSelector":"yes"}}`},
		{"job selector label not a string", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"selector":{"matchLabels":{"a":1}}}}`},
		{"service account secret not an object", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"},"secrets":["sa-token-x"]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := PruneManifest(mustObject(t, tc.in)); err == nil {
				t.Error("PruneManifest succeeded, want an error")
			}
		})
	}
}
