package binding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

func TestSyncReconciler(t *testing.T) {
	t.Parallel()
	// built is the Work fakeBuild makes for a target, with id as its
	// permanent id and the given Work annotations.
	built := func(target workv1alpha2.TargetCluster, id string, annos map[string]string) *workv1alpha1.Work {
		w := &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Name: nginxWork, Namespace: names.ExecutionNamespace(target.Name),
				Labels:      map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "rb1"},
				Annotations: annos, Finalizers: []string{workv1alpha1.ExecutionControllerFinalizer}},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"replicas":%d}`, target.Replicas))}}}}},
		}
		if id != "" {
			w.Labels[workv1alpha2.WorkPermanentIDLabel] = id
		}
		return w
	}
	stored := func(cluster string, replicas int32, mods ...func(*workv1alpha1.Work)) *workv1alpha1.Work {
		w := built(pt.At(cluster, replicas), "w-"+cluster, nil)
		for _, m := range mods {
			m(w)
		}
		return w
	}
	deletingWork := func(w *workv1alpha1.Work) { w.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }
	const opApplied = `[{"policyName":"op"}]`
	tests := []struct {
		name    string
		job     bool
		works   []*workv1alpha1.Work
		evicted []string
		// deleting: clusters being deleted; unknown: clusters not cached.
		deleting, unknown []string
		// overrides: the Work annotations the overrides of a cluster
		// record; overrideErr: clusters whose overrides fail.
		overrides   map[string]map[string]string
		overrideErr []string
		// evictedAtOnce: clusters of open tasks whose purge mode removes at once.
		evictedAtOnce []string
		writeErr      map[string]error
		wantWrites    []string
		wantIDs       map[string]string
		wantEvents    []string
		wantWrote     bool
		wantErr       bool
		wantCompl     map[string]int32
		// held: the revision (hash) a rollout holds a cluster at, built
		// from an older template; heldUnknown: clusters held at a revision
		// not in the cache. wantRevisions: the revision annotation of the
		// Works written, by namespace.
		held          map[string]string
		heldUnknown   []string
		wantRevisions map[string]string
	}{
		{name: "no Works: one per target", wantWrites: []string{"write karmada-es-a", "write karmada-es-b"}, wantWrote: true,
			wantIDs: map[string]string{"a": "", "b": ""}},
		{name: "a's Work up to date: only b's written, a's permanent id kept",
			works:      []*workv1alpha1.Work{stored("a", 1)},
			wantWrites: []string{"write karmada-es-b"}, wantWrote: true, wantIDs: map[string]string{"a": "w-a", "b": ""}},
		{name: "up to date: nothing", works: []*workv1alpha1.Work{stored("a", 1), stored("b", 1)},
			wantIDs: map[string]string{"a": "w-a", "b": "w-b"}},
		{name: "a's Work out of date: written", works: []*workv1alpha1.Work{stored("a", 3), stored("b", 1)},
			wantWrites: []string{"write karmada-es-a"}, wantWrote: true, wantIDs: map[string]string{"a": "w-a", "b": "w-b"}},
		{name: "Works of clusters no longer targeted deleted, unless deleting or evicted from",
			works:      []*workv1alpha1.Work{stored("a", 1), stored("b", 1), stored("c", 1), stored("d", 1, deletingWork), stored("e", 1)},
			evicted:    []string{"e"},
			wantWrites: []string{"delete karmada-es-c/" + nginxWork}, wantWrote: true, wantIDs: map[string]string{"a": "w-a", "b": "w-b"}},
		{name: "the Work of a cluster evicted Immediately goes though its task is open",
			works:         []*workv1alpha1.Work{stored("a", 1), stored("b", 1), stored("e", 1)},
			evictedAtOnce: []string{"e"},
			wantWrites:    []string{"delete karmada-es-e/" + nginxWork}, wantWrote: true, wantIDs: map[string]string{"a": "w-a", "b": "w-b"}},
		{name: "a cluster being deleted: no Work for it", deleting: []string{"b"},
			wantWrites: []string{"write karmada-es-a"}, wantWrote: true, wantIDs: map[string]string{"a": ""}},
		{name: "a cluster unknown: an error, the others written", unknown: []string{"b"},
			wantWrites: []string{"write karmada-es-a"}, wantWrote: true, wantErr: true, wantIDs: map[string]string{"a": ""}},
		{name: "overrides applied: reported once written", overrides: map[string]map[string]string{"a": {policyv1alpha1.AppliedOverridesAnnotation: opApplied}},
			wantWrites: []string{"write karmada-es-a", "write karmada-es-b"}, wantWrote: true, wantIDs: map[string]string{"a": "", "b": ""},
			wantEvents: []string{"Deployment/nginx Normal ApplyOverridePolicySucceed Apply override policy(default/op) for cluster(a) succeed."}},
		{name: "the write fails: an error, the overrides not reported", writeErr: map[string]error{"karmada-es-a": errors.New("etcd down")},
			overrides:  map[string]map[string]string{"a": {policyv1alpha1.AppliedOverridesAnnotation: opApplied}},
			wantWrites: []string{"write karmada-es-a", "write karmada-es-b"}, wantWrote: true, wantErr: true, wantIDs: map[string]string{"a": "", "b": ""}},
		{name: "overrides fail: ApplyOverridePolicyFailed, an error, the others written", overrideErr: []string{"b"},
			wantWrites: []string{"write karmada-es-a"}, wantWrote: true, wantErr: true, wantIDs: map[string]string{"a": "", "b": ""},
			wantEvents: []string{"Deployment/nginx Warning ApplyOverridePolicyFailed Apply override policies for cluster(b) failed: bad path"}},
		{name: "a Job: its completions divided", job: true, wantWrites: []string{"write karmada-es-a", "write karmada-es-b"}, wantWrote: true,
			wantIDs: map[string]string{"a": "", "b": ""}, wantCompl: map[string]int32{"a": 3, "b": 1}},
		{name: "a rollout holds a at an older revision: a's Work from it, each Work annotated with its revision",
			held:       map[string]string{"a": "old"},
			wantWrites: []string{"write karmada-es-a", "write karmada-es-b"}, wantWrote: true, wantIDs: map[string]string{"a": "", "b": ""},
			wantRevisions: map[string]string{"karmada-es-a": "old", "karmada-es-b": "current"}},
		{name: "a held at a revision not cached yet: a's Work left as it is, b's written",
			works: []*workv1alpha1.Work{stored("a", 3)}, held: map[string]string{"a": "old"}, heldUnknown: []string{"a"},
			wantWrites: []string{"write karmada-es-b"}, wantWrote: true, wantIDs: map[string]string{"b": ""},
			wantRevisions: map[string]string{"karmada-es-b": "current"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rb := newRB()
			for _, c := range tc.evicted {
				rb.Spec.GracefulEvictionTasks = append(rb.Spec.GracefulEvictionTasks, workv1alpha2.GracefulEvictionTask{FromCluster: c})
			}
			for _, c := range tc.evictedAtOnce {
				rb.Spec.GracefulEvictionTasks = append(rb.Spec.GracefulEvictionTasks,
					workv1alpha2.GracefulEvictionTask{FromCluster: c, PurgeMode: policyv1alpha1.PurgeModeImmediately})
			}
			b := &bindingView{namespace: rb.Namespace, name: rb.Name, id: "rb1", spec: &rb.Spec}
			template := nginxTemplate()
			if tc.job {
				template = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job",
					"metadata": map[string]any{"name": "nginx", "namespace": "default", "uid": "u1"}, "spec": map[string]any{"completions": int64(4)}}}
			}
			heldTemplate := template.DeepCopy()
			revs := map[string]string{}
			var (
				mu        sync.Mutex
				writes    []string
				events    []string
				ids       = map[string]string{}
				complSeen map[string]int32
			)
			r := syncReconciler{
				getCluster: func(name string) (*clusterv1alpha1.Cluster, error) {
					for _, u := range tc.unknown {
						if u == name {
							return nil, apierrors.NewNotFound(clusterv1alpha1.Resource("clusters"), name)
						}
					}
					c := pt.Cluster(name)
					for _, d := range tc.deleting {
						if d == name {
							c.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
						}
					}
					return c, nil
				},
				held: func(_ *bindingView, tmpl *unstructured.Unstructured, cluster string) (*unstructured.Unstructured, string, error) {
					if slices.Contains(tc.heldUnknown, cluster) {
						return nil, "", errRevisionUnknown
					}
					if h, ok := tc.held[cluster]; ok {
						return heldTemplate, h, nil
					}
					if tc.held != nil {
						return tmpl, "current", nil
					}
					return tmpl, "", nil
				},
				build: func(_ *bindingView, tmpl *unstructured.Unstructured, target workv1alpha2.TargetCluster, cluster *clusterv1alpha1.Cluster,
					completions map[string]int32, id string) (*workv1alpha1.Work, error) {
					want := template
					if _, ok := tc.held[target.Name]; ok {
						want = heldTemplate
					}
					if tmpl != want || cluster.Name != target.Name {
						t.Errorf("built from template %v for cluster %s, want the binding's template for %s", tmpl.GetName(), cluster.Name, target.Name)
					}
					ids[target.Name], complSeen = id, completions
					for _, c := range tc.overrideErr {
						if c == target.Name {
							return nil, &overrideError{cluster: c, err: errors.New("bad path")}
						}
					}
					return built(target, id, tc.overrides[target.Name]), nil
				},
				completions: func(completions int32, clusters []workv1alpha2.TargetCluster, uid string) map[string]int32 {
					if completions != 4 || len(clusters) != 2 || uid != "u1" {
						t.Errorf("completions(%d, %v, %s)", completions, clusters, uid)
					}
					return map[string]int32{"a": 3, "b": 1}
				},
				writeWork: func(_ context.Context, cur, desired *workv1alpha1.Work) error {
					mu.Lock()
					defer mu.Unlock()
					writes = append(writes, "write "+desired.Namespace)
					if r, ok := desired.Annotations[flotillav1alpha1.RevisionAnnotation]; ok {
						revs[desired.Namespace] = r
					}
					return tc.writeErr[desired.Namespace]
				},
				deleteWork: func(_ context.Context, ns, name string) error {
					mu.Lock()
					defer mu.Unlock()
					writes = append(writes, "delete "+ns+"/"+name)
					return nil
				},
				event: func(obj runtime.Object, eventType, reason, message string) {
					ref, ok := obj.(*corev1.ObjectReference)
					if !ok || ref.UID != template.GetUID() {
						t.Errorf("event on %v, want the template", obj)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					events = append(events, ref.Kind+"/"+ref.Name+" "+eventType+" "+reason+" "+message)
				},
			}
			wrote, err := r.reconcile(context.Background(), b, template, tc.works)
			if wrote != tc.wantWrote || (err != nil) != tc.wantErr {
				t.Errorf("wrote %v error %v, want wrote %v error %v", wrote, err, tc.wantWrote, tc.wantErr)
			}
			sort.Strings(writes)
			if diff := cmp.Diff(tc.wantWrites, writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIDs, ids); diff != "" {
				t.Errorf("permanent ids built with (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCompl, complSeen); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
			if tc.wantRevisions == nil {
				tc.wantRevisions = map[string]string{}
			}
			if diff := cmp.Diff(tc.wantRevisions, revs); diff != "" {
				t.Errorf("revisions of the Works written (-want +got):\n%s", diff)
			}
		})
	}
}
