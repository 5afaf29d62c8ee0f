package table

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"
)

// builtIns are objects of built-in kinds as members serve them, one per kind
// that kube-apiserver prints with its own columns.
var builtIns = []struct {
	gvk schema.GroupVersionKind
	raw string
}{
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"a":"1","b":"2"}}`},
	{schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"type":"Opaque","data":{"a":"MQ=="}}`},
	{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"},
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`},
	{schema.GroupVersionKind{Version: "v1", Kind: "Service"},
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"type":"NodePort","clusterIP":"10.96.0.12","clusterIPs":["10.96.0.12"],"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080,"nodePort":30080}],"selector":{"app":"web"},"sessionAffinity":"None","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster","externalTrafficPolicy":"Cluster"}}`},
	{schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"},
		`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"storageClassName":"standard","volumeName":"pv-1","volumeMode":"Filesystem"},"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}}}`},
	{schema.GroupVersionKind{Version: "v1", Kind: "Event"},
		`{"apiVersion":"v1","kind":"Event","metadata":{"name":"web.1","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"involvedObject":{"kind":"Pod","namespace":"default","name":"web"},"reason":"Scheduled","message":"assigned","source":{"component":"default-scheduler"},"firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:00Z","count":1,"type":"Normal"}`},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-1","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}},"status":{"replicas":3,"readyReplicas":2,"availableReplicas":2}}`},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"},
		`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"replicas":2,"serviceName":"db","selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"pg","image":"postgres:17"}]}}},"status":{"replicas":2,"readyReplicas":1}}`},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"},
		`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"kube-system","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"selector":{"matchLabels":{"app":"agent"}},"template":{"metadata":{"labels":{"app":"agent"}},"spec":{"nodeSelector":{"kubernetes.io/os":"linux"},"containers":[{"name":"agent","image":"agent:1"}]}}},"status":{"desiredNumberScheduled":3,"currentNumberScheduled":3,"numberReady":2,"updatedNumberScheduled":3,"numberAvailable":2}}`},
	{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
		`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"pi","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"completions":1,"parallelism":1,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"pi","image":"perl:5"}]}}},"status":{"succeeded":1,"startTime":"2026-01-01T00:00:00Z","completionTime":"2026-01-01T00:00:42Z","conditions":[{"type":"Complete","status":"True"}]}}`},
	{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"},
		`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"nightly","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"schedule":"0 3 * * *","suspend":false,"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`},
	{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
		`{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"web","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"ingressClassName":"nginx","rules":[{"host":"web.example.com","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]},"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"}]}}}`},
	{schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"},
		`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"web.2","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"kubelet","reportingInstance":"node-1","action":"Pulled","reason":"Pulled","regarding":{"kind":"Pod","namespace":"default","name":"web"},"note":"pulled","type":"Normal"}`},
	{schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"},
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"node-1","namespace":"kube-node-lease","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"holderIdentity":"node-1","leaseDurationSeconds":40}}`},
}

// referenceTable prints raw as kube-apiserver's storage does: decoded and
// defaulted into the internal version, then printed by printerstorage.
func referenceTable(t *testing.T, gvk schema.GroupVersionKind, raw []byte) *metav1.Table {
	t.Helper()
	internalGV := schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal}
	obj, _, err := legacyscheme.Codecs.DecoderToVersion(legacyscheme.Codecs.UniversalDeserializer(), internalGV).Decode(raw, nil, nil)
	if err != nil {
		t.Fatalf("decoding the reference %s: %v", gvk.Kind, err)
	}
	convertor := printerstorage.TableConvertor{TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers)}
	table, err := convertor.ConvertToTable(context.Background(), obj, &metav1.TableOptions{})
	if err != nil {
		t.Fatalf("printing the reference %s: %v", gvk.Kind, err)
	}
	return table
}

func TestConvertMatchesKubeAPIServer(t *testing.T) {
	now := time.Now()
	c := newConvertor(t)
	cases := builtIns
	for _, extra := range []struct {
		gvk schema.GroupVersionKind
		obj any
	}{
		{podGVK, kwokPod(now, "default", "web-1", podOptions{containers: 2, ready: 1, restarts: 3, restartedAgo: time.Hour})},
		{deploymentGVK, webDeployment(now)},
		{nodeGVK, controlPlaneNode(now)},
	} {
		cases = append(cases, struct {
			gvk schema.GroupVersionKind
			raw string
		}{extra.gvk, string(mustJSON(t, extra.obj))})
	}
	for _, tt := range cases {
		t.Run(tt.gvk.String(), func(t *testing.T) {
			want := referenceTable(t, tt.gvk, []byte(tt.raw))
			got, err := c.Convert(context.Background(), tt.gvk, [][]byte{[]byte(tt.raw)}, nil, metav1.ListMeta{})
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if len(got.ColumnDefinitions) <= 2 {
				t.Errorf("got the default columns %v, want the printer's", columnNames(got))
			}
			if diff := cmp.Diff(want.ColumnDefinitions, got.ColumnDefinitions); diff != "" {
				t.Errorf("columns (-kube-apiserver +got):\n%s", diff)
			}
			if diff := cmp.Diff(cells(want), cells(got)); diff != "" {
				t.Errorf("cells (-kube-apiserver +got):\n%s", diff)
			}
			if len(got.Rows) == 1 && len(want.Rows) == 1 {
				if diff := cmp.Diff(want.Rows[0].Conditions, got.Rows[0].Conditions); diff != "" {
					t.Errorf("row conditions (-kube-apiserver +got):\n%s", diff)
				}
			}
		})
	}
}
