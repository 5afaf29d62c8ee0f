package table

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	podGVK        = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	nodeGVK       = schema.GroupVersionKind{Version: "v1", Kind: "Node"}
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	widgetGVK     = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
)

// newConvertor returns a Convertor or fails the test.
func newConvertor(tb testing.TB) *Convertor {
	tb.Helper()
	c, err := New()
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return c
}

// columnNames returns the names of the table's columns, with "(wide)" after
// those kubectl shows only with -o wide.
func columnNames(table *metav1.Table) []string {
	var names []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority > 0 {
			names = append(names, c.Name+" (wide)")
			continue
		}
		names = append(names, c.Name)
	}
	return names
}

// cells returns the cells of every row of the table.
func cells(table *metav1.Table) [][]any {
	var out [][]any
	for _, r := range table.Rows {
		out = append(out, r.Cells)
	}
	return out
}

func TestConvertBuiltIn(t *testing.T) {
	now := time.Now()
	c := newConvertor(t)
	podColumns := []string{"Name", "Ready", "Status", "Restarts", "Age", "IP (wide)", "Node (wide)", "Nominated Node (wide)", "Readiness Gates (wide)"}
	tests := []struct {
		name    string
		gvk     schema.GroupVersionKind
		obj     any
		columns []string
		cells   []any
	}{{
		name:    "running pod with 2/2 ready containers",
		gvk:     podGVK,
		obj:     kwokPod(now, "default", "web-1", podOptions{containers: 2, ready: 2}),
		columns: podColumns,
		cells:   []any{"web-1", "2/2", "Running", "0", "30m", "10.244.3.17", "member1-kwok-node-3", "<none>", "<none>"},
	}, {
		name:    "pod with a restart",
		gvk:     podGVK,
		obj:     kwokPod(now, "default", "web-2", podOptions{containers: 2, ready: 1, restarts: 1, restartedAgo: 15 * time.Minute}),
		columns: podColumns,
		cells:   []any{"web-2", "1/2", "Running", "1 (15m ago)", "30m", "10.244.3.17", "member1-kwok-node-3", "<none>", "<none>"},
	}, {
		name:    "pending pod",
		gvk:     podGVK,
		obj:     kwokPod(now, "default", "web-3", podOptions{containers: 1, pending: true}),
		columns: podColumns,
		cells:   []any{"web-3", "0/1", "Pending", "0", "30m", "<none>", "<none>", "<none>", "<none>"},
	}, {
		name:    "deployment",
		gvk:     deploymentGVK,
		obj:     webDeployment(now),
		columns: []string{"Name", "Ready", "Up-to-date", "Available", "Age", "Containers (wide)", "Images (wide)", "Selector (wide)"},
		cells:   []any{"web", "3/3", int64(3), int64(3), "30m", "nginx,sidecar", "nginx:1.27,busybox:1.36", "app=web"},
	}, {
		name:    "node",
		gvk:     nodeGVK,
		obj:     controlPlaneNode(now),
		columns: []string{"Name", "Status", "Roles", "Age", "Version", "Internal-IP (wide)", "External-IP (wide)", "OS-Image (wide)", "Kernel-Version (wide)", "Container-Runtime (wide)"},
		cells:   []any{"member1-control-plane", "Ready", "control-plane", "3d", "v1.36.3", "172.18.0.2", "<none>", "Debian GNU/Linux 12 (bookworm)", "6.1.0-18-amd64 (amd64)", "containerd://2.1.1"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := c.Convert(context.Background(), tt.gvk, [][]byte{mustJSON(t, tt.obj)}, nil, metav1.ListMeta{})
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if diff := cmp.Diff(tt.columns, columnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([][]any{tt.cells}, cells(table)); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertDefaultColumns(t *testing.T) {
	now := time.Now()
	c := newConvertor(t)
	created := ago(now, time.Hour).UTC().Format(time.RFC3339)
	role := map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "reader", "namespace": "default", "creationTimestamp": created},
		"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}}},
	}
	capacity := map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
		"metadata":         map[string]any{"name": "csisc-1", "namespace": "default", "creationTimestamp": created},
		"storageClassName": "standard",
	}
	tests := []struct {
		name string
		gvk  schema.GroupVersionKind
		obj  any
		want []any
	}{
		{"custom resource", widgetGVK, widget(now, "w-1"), []any{"w-1", created}},
		{"built-in kind without a printer", schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, role, []any{"reader", created}},
		{"built-in kind kube-apiserver prints by default", schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "CSIStorageCapacity"}, capacity, []any{"csisc-1", created}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := c.Convert(context.Background(), tt.gvk, [][]byte{mustJSON(t, tt.obj)}, &metav1.TableOptions{}, metav1.ListMeta{})
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if diff := cmp.Diff([]string{"Name", "Created At"}, columnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([][]any{tt.want}, cells(table)); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertRowObject(t *testing.T) {
	now := time.Now()
	c := newConvertor(t)
	pod := mustJSON(t, kwokPod(now, "default", "web-1", podOptions{containers: 2, ready: 2}))
	crd := mustJSON(t, widget(now, "w-1"))
	// A pod as a member serves it inside a list: without apiVersion and kind.
	bare := kwokPod(now, "default", "web-2", podOptions{containers: 1, ready: 1})
	bare.APIVersion, bare.Kind = "", ""
	bareRaw := mustJSON(t, bare)

	tests := []struct {
		name    string
		gvk     schema.GroupVersionKind
		raw     []byte
		include metav1.IncludeObjectPolicy
		// want is "none", "metadata" or "raw" (the raw JSON as given).
		want string
		// wantTypeMeta, with want "raw", is the type the raw object must have.
		wantTypeMeta metav1.TypeMeta
	}{
		{"pod, none", podGVK, pod, metav1.IncludeNone, "none", metav1.TypeMeta{}},
		{"pod, unset", podGVK, pod, "", "metadata", metav1.TypeMeta{}},
		{"pod, metadata", podGVK, pod, metav1.IncludeMetadata, "metadata", metav1.TypeMeta{}},
		{"pod, object", podGVK, pod, metav1.IncludeObject, "raw", metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}},
		{"pod without type, object", podGVK, bareRaw, metav1.IncludeObject, "raw", metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}},
		{"custom resource, none", widgetGVK, crd, metav1.IncludeNone, "none", metav1.TypeMeta{}},
		{"custom resource, metadata", widgetGVK, crd, metav1.IncludeMetadata, "metadata", metav1.TypeMeta{}},
		{"custom resource, object", widgetGVK, crd, metav1.IncludeObject, "raw", metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := c.Convert(context.Background(), tt.gvk, [][]byte{tt.raw}, &metav1.TableOptions{IncludeObject: tt.include}, metav1.ListMeta{})
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("got %d rows, want 1", len(table.Rows))
			}
			got := table.Rows[0].Object
			var input map[string]any
			if err := json.Unmarshal(tt.raw, &input); err != nil {
				t.Fatal(err)
			}
			switch tt.want {
			case "none":
				if got.Object != nil || got.Raw != nil {
					t.Errorf("row object = %#v, want none", got)
				}
			case "metadata":
				partial, ok := got.Object.(*metav1.PartialObjectMetadata)
				if !ok {
					t.Fatalf("row object is %T, want *metav1.PartialObjectMetadata", got.Object)
				}
				wantType := metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}
				if partial.TypeMeta != wantType {
					t.Errorf("type = %+v, want %+v", partial.TypeMeta, wantType)
				}
				meta := input["metadata"].(map[string]any)
				if partial.Name != meta["name"] || partial.Namespace != meta["namespace"] {
					t.Errorf("metadata names %s/%s, want %s/%s", partial.Namespace, partial.Name, meta["namespace"], meta["name"])
				}
				if partial.Annotations[cachedFromAnnotation] == "" {
					t.Errorf("annotations %v lack %s", partial.Annotations, cachedFromAnnotation)
				}
			case "raw":
				if got.Object != nil {
					t.Fatalf("row object is %T, want raw JSON", got.Object)
				}
				var obj map[string]any
				if err := json.Unmarshal(got.Raw, &obj); err != nil {
					t.Fatalf("row object is not JSON: %v\n%s", err, got.Raw)
				}
				if obj["apiVersion"] != tt.wantTypeMeta.APIVersion || obj["kind"] != tt.wantTypeMeta.Kind {
					t.Errorf("row object type %v/%v, want %+v", obj["apiVersion"], obj["kind"], tt.wantTypeMeta)
				}
				delete(obj, "apiVersion")
				delete(obj, "kind")
				delete(input, "apiVersion")
				delete(input, "kind")
				if diff := cmp.Diff(input, obj); diff != "" {
					t.Errorf("row object differs from the cached one (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestConvertHeadersAndListMeta(t *testing.T) {
	now := time.Now()
	c := newConvertor(t)
	listMeta := metav1.ListMeta{ResourceVersion: "eyJtZW1iZXIxIjoiMTIzIn0", Continue: "next-page"}
	pod := mustJSON(t, kwokPod(now, "default", "web-1", podOptions{containers: 1, ready: 1}))
	tests := []struct {
		name        string
		gvk         schema.GroupVersionKind
		objs        [][]byte
		opts        *metav1.TableOptions
		wantColumns int
	}{
		{"pods with headers", podGVK, [][]byte{pod}, &metav1.TableOptions{}, 9},
		{"pods without headers", podGVK, [][]byte{pod}, &metav1.TableOptions{NoHeaders: true}, 0},
		{"no pods", podGVK, nil, nil, 9},
		{"no custom resources", widgetGVK, [][]byte{}, nil, 2},
		{"custom resources without headers", widgetGVK, [][]byte{mustJSON(t, widget(now, "w"))}, &metav1.TableOptions{NoHeaders: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := c.Convert(context.Background(), tt.gvk, tt.objs, tt.opts, listMeta)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if len(table.ColumnDefinitions) != tt.wantColumns {
				t.Errorf("got %d columns, want %d", len(table.ColumnDefinitions), tt.wantColumns)
			}
			if table.Rows == nil || len(table.Rows) != len(tt.objs) {
				t.Errorf("got rows %v, want %d (never null)", table.Rows, len(tt.objs))
			}
			if diff := cmp.Diff(listMeta, table.ListMeta); diff != "" {
				t.Errorf("list meta (-want +got):\n%s", diff)
			}
			if table.APIVersion != "meta.k8s.io/v1" || table.Kind != "Table" {
				t.Errorf("table type %s/%s", table.APIVersion, table.Kind)
			}
		})
	}
}

func TestConvertKeepsOrderAcrossChunks(t *testing.T) {
	now := time.Now()
	c := newConvertor(t)
	n := 3*chunkSize + 17
	objs := make([][]byte, n)
	for i := range objs {
		objs[i] = mustJSON(t, kwokPod(now, "ns", fmt.Sprintf("pod-%05d", i), podOptions{containers: 1, ready: 1}))
	}
	table, err := c.Convert(context.Background(), podGVK, objs, nil, metav1.ListMeta{})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if len(table.Rows) != n {
		t.Fatalf("got %d rows, want %d", len(table.Rows), n)
	}
	for i, row := range table.Rows {
		if want := fmt.Sprintf("pod-%05d", i); row.Cells[0] != want {
			t.Fatalf("row %d is %v, want %s", i, row.Cells[0], want)
		}
		if row.Object.Object.(*metav1.PartialObjectMetadata).Name != row.Cells[0] {
			t.Fatalf("row %d has the object of %s", i, row.Object.Object.(*metav1.PartialObjectMetadata).Name)
		}
	}
}

func TestConvertErrors(t *testing.T) {
	now := time.Now()
	c := newConvertor(t)
	good := mustJSON(t, kwokPod(now, "default", "good", podOptions{containers: 1, ready: 1}))
	many := make([][]byte, 2*chunkSize)
	for i := range many {
		many[i] = good
	}
	many[chunkSize+5] = []byte(`{"metadata":{"name":"late","namespace":"ns"},"spec":{"containers":7}}`)
	tests := []struct {
		name string
		gvk  schema.GroupVersionKind
		objs [][]byte
		opts *metav1.TableOptions
		// want are strings the error must hold.
		want []string
	}{
		{"truncated JSON", podGVK, [][]byte{good, []byte(`{"metadata":{"name":"cut"`)}, nil, []string{"decoding Pod (item 1)"}},
		{"wrong field type", podGVK, [][]byte{[]byte(`{"metadata":{"name":"bad","namespace":"default"},"spec":{"containers":"nginx"}}`)}, nil, []string{`decoding Pod "default/bad" (item 0)`, "spec.containers"}},
		{"wrong type in a later chunk", podGVK, many, nil, []string{fmt.Sprintf(`decoding Pod "ns/late" (item %d)`, chunkSize+5)}},
		{"custom resource that is not an object", widgetGVK, [][]byte{[]byte(`[1,2]`)}, nil, []string{"decoding Widget (item 0)"}},
		{"custom resource with a bad name", widgetGVK, [][]byte{[]byte(`{"metadata":{"name":5}}`)}, nil, []string{"decoding Widget (item 0)"}},
		{"unknown includeObject", podGVK, [][]byte{good}, &metav1.TableOptions{IncludeObject: "Everything"}, []string{`unrecognized includeObject value: "Everything"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := c.Convert(context.Background(), tt.gvk, tt.objs, tt.opts, metav1.ListMeta{})
			if err == nil {
				t.Fatalf("Convert returned a table of %d rows, want an error", len(table.Rows))
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not hold %q", err, want)
				}
			}
		})
	}
	_, err := c.Convert(context.Background(), podGVK, [][]byte{good}, &metav1.TableOptions{IncludeObject: "Everything"}, metav1.ListMeta{})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("unknown includeObject gave %v, want a BadRequest", err)
	}
}

func TestConvertCanceled(t *testing.T) {
	c := newConvertor(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pod := mustJSON(t, kwokPod(time.Now(), "default", "web", podOptions{containers: 1, ready: 1}))
	if _, err := c.Convert(ctx, podGVK, [][]byte{pod}, nil, metav1.ListMeta{}); err == nil {
		t.Fatal("Convert on a canceled context succeeded")
	}
}
