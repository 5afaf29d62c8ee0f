package unifiedauth

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestWorkReconciler(t *testing.T) {
	t.Parallel()
	role := func(users ...string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ImpersonatorName},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: users, Verbs: []string{"impersonate"}}}}
	}
	// storedFor is the Work the server holds after obj was written to
	// member1: created, then mutated as the registry does.
	storedFor := func(t *testing.T, obj any) *workv1alpha1.Work {
		t.Helper()
		var created *workv1alpha1.Work
		r := workReconciler{
			getWork: func(ns, name string) (*workv1alpha1.Work, error) {
				return nil, apierrors.NewNotFound(workv1alpha1.Resource("works"), name)
			},
			write: func(_ context.Context, _, desired *workv1alpha1.Work) error { created = desired.DeepCopy(); return nil },
		}
		if _, err := r.reconcile(context.Background(), member1(), "ClusterRole", obj); err != nil {
			t.Fatal(err)
		}
		if err := mutation.MutateWork(created, true); err != nil {
			t.Fatal(err)
		}
		created.ResourceVersion = "7"
		return created
	}
	tests := []struct {
		name     string
		stored   *workv1alpha1.Work // nil: none
		getErr   error
		writeErr error
		// wantWrite: a write, from the stored Work (update) or not (create).
		wantWrite, wantUpdate, wantWrote, wantErr bool
	}{
		{name: "no Work: created", wantWrite: true, wantWrote: true},
		{name: "the Work carries the object: nothing", stored: storedFor(t, role("alice"))},
		{name: "the Work carries another object: updated", stored: storedFor(t, role("bob")), wantWrite: true, wantUpdate: true, wantWrote: true},
		{name: "the Work unreadable: an error, no write", getErr: errors.New("cache"), wantErr: true},
		{name: "the write fails: its error", writeErr: errors.New("etcd down"), wantWrite: true, wantWrote: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var writes []*workv1alpha1.Work
			var from *workv1alpha1.Work
			r := workReconciler{
				getWork: func(ns, name string) (*workv1alpha1.Work, error) {
					if ns != memberNS || name != roleWork {
						t.Errorf("got Work %s/%s, want %s/%s", ns, name, memberNS, roleWork)
					}
					switch {
					case tc.getErr != nil:
						return nil, tc.getErr
					case tc.stored == nil:
						return nil, apierrors.NewNotFound(workv1alpha1.Resource("works"), name)
					}
					return tc.stored, nil
				},
				write: func(_ context.Context, cur, desired *workv1alpha1.Work) error {
					writes, from = append(writes, desired), cur
					return tc.writeErr
				},
			}
			wrote, err := r.reconcile(context.Background(), member1(), "ClusterRole", role("alice"))
			if (err != nil) != tc.wantErr || wrote != tc.wantWrote {
				t.Errorf("got wrote %v, error %v; want wrote %v, error %v", wrote, err, tc.wantWrote, tc.wantErr)
			}
			if len(writes) != map[bool]int{true: 1}[tc.wantWrite] {
				t.Fatalf("got %d writes, want a write: %v", len(writes), tc.wantWrite)
			}
			if !tc.wantWrite {
				return
			}
			if (from != nil) != tc.wantUpdate || (from != nil && from != tc.stored) {
				t.Errorf("written from %v, want an update: %v", from, tc.wantUpdate)
			}
			w := writes[0]
			if w.Namespace != memberNS || w.Name != roleWork {
				t.Errorf("wrote Work %s/%s", w.Namespace, w.Name)
			}
			wantAnnos := map[string]string{fingerprintAnnotation: storedFor(t, role("alice")).Annotations[fingerprintAnnotation],
				workv1alpha2.ResourceConflictResolutionAnnotation: workv1alpha2.ResourceConflictResolutionOverwrite}
			if diff := cmp.Diff(wantAnnos, w.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{workv1alpha1.ExecutionControllerFinalizer}, w.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			if o := metav1.GetControllerOf(w); o == nil || o.Kind != "Cluster" || o.Name != "member1" || o.UID != "c-uid" {
				t.Errorf("owner %v, want the Cluster member1", o)
			}
			if tc.wantUpdate && w.Labels[workv1alpha2.WorkPermanentIDLabel] != tc.stored.Labels[workv1alpha2.WorkPermanentIDLabel] {
				t.Errorf("the update drops the permanent id: labels %v", w.Labels)
			}
		})
	}
}
