package rollout

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/json"
	clienttesting "k8s.io/client-go/testing"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// revision is revision n of web/nginx with template content.
func revision(t *testing.T, n int64, hash string, content map[string]any) *flotillav1alpha1.ResourceRevision {
	t.Helper()
	raw, err := json.Marshal(content)
	if err != nil {
		t.Fatal(err)
	}
	return &flotillav1alpha1.ResourceRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment-" + hash, Namespace: "web",
			Labels: map[string]string{flotillav1alpha1.BindingLabel: "nginx-deployment"}},
		Binding: "nginx-deployment", Revision: n, Hash: hash,
		Template: runtime.RawExtension{Raw: raw},
	}
}

// content is a revision's template of web/nginx with replicas and image.
func content(replicas int64, image string, annotations map[string]any) map[string]any {
	md := map[string]any{"labels": map[string]any{"app": "nginx"}, "generation": int64(1)}
	if annotations != nil {
		md["annotations"] = annotations
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
		"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": image}}}}},
	}
}

// live is web/nginx as content(replicas, image) with the metadata the
// server and the policy set.
func live(replicas int64, image string) *unstructured.Unstructured {
	c := content(replicas, image, nil)
	return deployment(c["spec"].(map[string]any), map[string]any{"app": "nginx"}, nil)
}

func TestRollBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		live     *unstructured.Unstructured
		revision map[string]any
		want     *unstructured.Unstructured
		changed  bool
	}{{
		name:     "spec replaced, generation, name, status and resourceVersion kept",
		live:     live(3, "nginx:1.27"),
		revision: content(2, "nginx:1.26", nil),
		want:     live(2, "nginx:1.26"),
		changed:  true,
	}, {
		name:     "equal content: unchanged",
		live:     live(2, "nginx:1.26"),
		revision: content(2, "nginx:1.26", nil),
		want:     live(2, "nginx:1.26"),
	}, {
		name: "top-level fields the revision lacks are dropped, its own added, its status ignored",
		live: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "generation": int64(4)}, "data": map[string]any{"a": "1"}, "status": "live"}},
		revision: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generation": int64(1)},
			"binaryData": map[string]any{"b": "Mg=="}, "immutable": false, "status": "old"},
		want: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "generation": int64(4)}, "binaryData": map[string]any{"b": "Mg=="}, "immutable": false, "status": "live"}},
		changed: true,
	}, {
		name: "labels and annotations from the revision; the policy's and last-applied kept from live",
		live: deployment(map[string]any{"replicas": int64(2)},
			map[string]any{"app": "nginx", "tier": "web", "propagationpolicy.karmada.io/permanent-id": "new-id"},
			map[string]any{"kubernetes.io/change-cause": "scale to 2", "propagationpolicy.karmada.io/name": "new", "propagationpolicy.karmada.io/namespace": "web",
				"kubectl.kubernetes.io/last-applied-configuration": "{live}"}),
		revision: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"replicas": int64(2)},
			"metadata": map[string]any{
				"labels": map[string]any{"app": "nginx", "propagationpolicy.karmada.io/permanent-id": "old-id", "clusterpropagationpolicy.karmada.io/permanent-id": "old-cpp"},
				"annotations": map[string]any{"kubernetes.io/change-cause": "first", "propagationpolicy.karmada.io/name": "old",
					"kubectl.kubernetes.io/last-applied-configuration": "{old}"}}},
		want: deployment(map[string]any{"replicas": int64(2)},
			map[string]any{"app": "nginx", "propagationpolicy.karmada.io/permanent-id": "new-id"},
			map[string]any{"kubernetes.io/change-cause": "first", "propagationpolicy.karmada.io/name": "new", "propagationpolicy.karmada.io/namespace": "web",
				"kubectl.kubernetes.io/last-applied-configuration": "{live}"}),
		changed: true,
	}, {
		name:     "a revision without labels removes them",
		live:     deployment(map[string]any{"replicas": int64(2)}, map[string]any{"app": "nginx"}, map[string]any{"a": "b"}),
		revision: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"replicas": int64(2)}},
		want:     deployment(map[string]any{"replicas": int64(2)}, nil, nil),
		changed:  true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := tc.live.DeepCopy()
			got, changed := RollBack(tc.live, tc.revision)
			if diff := cmp.Diff(tc.want.Object, got.Object); diff != "" {
				t.Errorf("rolled back (-want +got):\n%s", diff)
			}
			if changed != tc.changed {
				t.Errorf("changed %v, want %v", changed, tc.changed)
			}
			if diff := cmp.Diff(before.Object, tc.live.Object); diff != "" {
				t.Errorf("RollBack changed live (-before +after):\n%s", diff)
			}
		})
	}
}

// TestRollBackDecoded: a revision read from JSON (numbers as Undo decodes
// them) equal to the template is no change.
func TestRollBackDecoded(t *testing.T) {
	t.Parallel()
	rev := revision(t, 1, "a", content(2, "nginx:1.26", nil))
	var decoded map[string]any
	if err := json.Unmarshal(rev.Template.Raw, &decoded); err != nil {
		t.Fatal(err)
	}
	if _, changed := RollBack(live(2, "nginx:1.26"), decoded); changed {
		t.Error("an equal revision read from JSON is a change")
	}
}

func TestUndo(t *testing.T) {
	t.Parallel()
	revs := func(t *testing.T) []runtime.Object {
		return []runtime.Object{
			revision(t, 3, "c", content(3, "nginx:1.27", nil)),
			revision(t, 1, "a", content(1, "nginx:1.25", nil)),
			revision(t, 2, "b", content(2, "nginx:1.26", nil)),
		}
	}
	for _, tc := range []struct {
		name       string
		template   *unstructured.Unstructured
		revisions  func(*testing.T) []runtime.Object
		toRevision int64
		conflicts  int
		want       *unstructured.Unstructured // the template after
		out        string
		wantErr    string
	}{
		{name: "the previous revision", template: live(3, "nginx:1.27"), revisions: revs,
			want: live(2, "nginx:1.26"), out: "deployment.apps/nginx rolled back to revision 2"},
		{name: "a named revision, after a conflict", template: live(3, "nginx:1.27"), revisions: revs, toRevision: 1, conflicts: 1,
			want: live(1, "nginx:1.25"), out: "deployment.apps/nginx rolled back to revision 1"},
		{name: "the previous of a template changed since its newest revision", template: live(5, "nginx:1.28"), revisions: revs,
			want: live(2, "nginx:1.26"), out: "deployment.apps/nginx rolled back to revision 2"},
		{name: "already there", template: live(2, "nginx:1.26"), revisions: revs, toRevision: 2,
			want: live(2, "nginx:1.26"), out: "deployment.apps/nginx skipped rollback (current template already matches revision 2)"},
		{name: "unknown revision", template: live(3, "nginx:1.27"), revisions: revs, toRevision: 9, wantErr: "unable to find revision 9 of deployment/nginx"},
		{name: "no previous revision", template: live(3, "nginx:1.27"),
			revisions: func(t *testing.T) []runtime.Object { return revs(t)[:1] }, wantErr: "no revision before revision 3 of deployment/nginx"},
		{name: "no revisions", template: live(3, "nginx:1.27"), revisions: func(*testing.T) []runtime.Object { return nil },
			wantErr: "no rollout history found for deployment/nginx"},
		{name: "no template", revisions: revs, wantErr: `deployments.apps "nginx" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.template, tc.revisions(t)...)
			var updates []string
			conflicts := tc.conflicts
			f.dynamic.PrependReactor("update", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
				u := a.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured)
				updates = append(updates, u.GetResourceVersion())
				if conflicts > 0 {
					conflicts--
					return true, nil, apierrors.NewConflict(deploymentsGVR.GroupResource(), "nginx", nil)
				}
				return false, nil, nil
			})
			err := f.Undo(context.Background(), tc.toRevision)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if len(updates) != 0 {
					t.Errorf("updated the template %d times", len(updates))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(f.out.String()) != tc.out {
				t.Errorf("output %q, want %q", f.out.String(), tc.out)
			}
			got, err := f.resource().Get(context.Background(), "nginx", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.Object, got.Object); diff != "" {
				t.Errorf("template (-want +got):\n%s", diff)
			}
			wantUpdates := tc.conflicts + 1
			if strings.HasPrefix(tc.out, "deployment.apps/nginx skipped") {
				wantUpdates = 0
			}
			if len(updates) != wantUpdates || slices.ContainsFunc(updates, func(rv string) bool { return rv != "42" }) {
				t.Errorf("updates with resourceVersions %q, want %d with the live one (42)", updates, wantUpdates)
			}
		})
	}
}
