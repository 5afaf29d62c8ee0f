package execution

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

func TestFinalizerReconciler(t *testing.T) {
	t.Parallel()
	const fin = workv1alpha1.ExecutionControllerFinalizer
	tests := []struct {
		name       string
		remove     bool // remove, else ensure
		finalizers []string
		patchErr   error
		want       []string
		wantErr    bool
	}{
		{name: "ensure: present, no patch", finalizers: []string{"a", fin}},
		{name: "ensure: absent, appended at the stored resourceVersion", finalizers: []string{"a"},
			want: []string{`merge {"metadata":{"finalizers":["a","` + fin + `"],"resourceVersion":"7"}}`}},
		{name: "ensure: the patch fails, its error", patchErr: errors.New("conflict"), wantErr: true,
			want: []string{`merge {"metadata":{"finalizers":["` + fin + `"],"resourceVersion":"7"}}`}},
		{name: "remove: absent, no patch", remove: true, finalizers: []string{"a"}},
		{name: "remove: the entry tested and removed at its index", remove: true, finalizers: []string{"a", fin, "b"},
			want: []string{`json [{"op":"test","path":"/metadata/finalizers/1","value":"` + fin + `"},{"op":"remove","path":"/metadata/finalizers/1"}]`}},
		{name: "remove: the Work gone, no error", remove: true, finalizers: []string{fin},
			patchErr: apierrors.NewNotFound(workv1alpha1.Resource("works"), "cm"),
			want:     []string{`json [{"op":"test","path":"/metadata/finalizers/0","value":"` + fin + `"},{"op":"remove","path":"/metadata/finalizers/0"}]`}},
		{name: "remove: the patch fails, its error", remove: true, finalizers: []string{fin}, patchErr: errors.New("test failed"), wantErr: true,
			want: []string{`json [{"op":"test","path":"/metadata/finalizers/0","value":"` + fin + `"},{"op":"remove","path":"/metadata/finalizers/0"}]`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			works := &fakeWorks{err: tc.patchErr}
			r := finalizerReconciler{patch: works.patch}
			work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: testNS, ResourceVersion: "7", Finalizers: tc.finalizers}}
			op := r.ensure
			if tc.remove {
				op = r.remove
			}
			if err := op(context.Background(), work); (err != nil) != tc.wantErr {
				t.Errorf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, works.patches); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
		})
	}
}
