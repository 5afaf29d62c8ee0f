package binding

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestFinalizeReconciler(t *testing.T) {
	t.Parallel()
	work := func(cluster string, deleting bool) *workv1alpha1.Work {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-" + cluster, Name: nginxWork}}
		if deleting {
			w.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		}
		return w
	}
	rb := &bindingView{namespace: "default", name: "nginx-deployment", id: "rb1"}
	crb := &bindingView{cluster: true, name: "reader-clusterrole", id: "crb1"}
	notFound := apierrors.NewNotFound(workv1alpha1.Resource("works"), nginxWork)
	tests := []struct {
		name       string
		binding    *bindingView
		works      []*workv1alpha1.Work
		finalizers []string
		deleteErr  error
		patchErr   error
		want       []string
		wantErr    bool
	}{
		{name: "Works left: those not yet deleting deleted, the finalizer kept", binding: rb,
			works: []*workv1alpha1.Work{work("a", false), work("b", true)}, finalizers: []string{workv1alpha2.BindingControllerFinalizer},
			want: []string{"delete karmada-es-a/" + nginxWork}},
		{name: "a Work gone meanwhile: no error", binding: rb, works: []*workv1alpha1.Work{work("a", false)}, deleteErr: notFound,
			finalizers: []string{workv1alpha2.BindingControllerFinalizer}, want: []string{"delete karmada-es-a/" + nginxWork}},
		{name: "a deletion fails: its error", binding: rb, works: []*workv1alpha1.Work{work("a", false)}, deleteErr: errors.New("etcd down"),
			finalizers: []string{workv1alpha2.BindingControllerFinalizer}, want: []string{"delete karmada-es-a/" + nginxWork}, wantErr: true},
		{name: "no Work left: our finalizer dropped, the others kept", binding: rb,
			finalizers: []string{"other", workv1alpha2.BindingControllerFinalizer},
			want:       []string{`patch default/nginx-deployment {"metadata":{"finalizers":["other"]}}`}},
		{name: "a cluster binding: its own finalizer", binding: crb,
			finalizers: []string{workv1alpha2.BindingControllerFinalizer, workv1alpha2.ClusterResourceBindingControllerFinalizer},
			want:       []string{`patch /reader-clusterrole {"metadata":{"finalizers":["` + workv1alpha2.BindingControllerFinalizer + `"]}}`}},
		{name: "no finalizer of ours: nothing", binding: rb, finalizers: []string{"other"}},
		{name: "the binding gone meanwhile: no error", binding: rb, finalizers: []string{workv1alpha2.BindingControllerFinalizer},
			patchErr: apierrors.NewNotFound(workv1alpha2.Resource("resourcebindings"), "nginx-deployment"),
			want:     []string{`patch default/nginx-deployment {"metadata":{"finalizers":null}}`}},
		{name: "the patch fails: its error", binding: rb, finalizers: []string{workv1alpha2.BindingControllerFinalizer}, patchErr: errors.New("conflict"),
			want: []string{`patch default/nginx-deployment {"metadata":{"finalizers":null}}`}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var writes []string
			r := finalizeReconciler{
				deleteWork: func(_ context.Context, ns, name string) error {
					writes = append(writes, "delete "+ns+"/"+name)
					return tc.deleteErr
				},
				patchBinding: func(_ context.Context, b *bindingView, patch []byte) error {
					writes = append(writes, "patch "+b.namespace+"/"+b.name+" "+string(patch))
					return tc.patchErr
				},
			}
			if err := r.reconcile(context.Background(), tc.binding, tc.works, tc.finalizers); (err != nil) != tc.wantErr {
				t.Errorf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
		})
	}
}
