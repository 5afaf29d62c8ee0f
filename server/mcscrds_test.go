package server

import (
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The MCS CRDs are applied when absent and when this server applied them
// before (a new Flotilla brings its definition); a CRD of that name someone
// else installed is left alone. (The e2e suites see them installed on a
// real host.)
func TestShouldApplyCRD(t *testing.T) {
	t.Parallel()
	crd := func(managers ...string) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "serviceexports.multicluster.x-k8s.io"}}
		for _, m := range managers {
			c.ManagedFields = append(c.ManagedFields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationApply})
		}
		return c
	}
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, "x")
	for _, tc := range []struct {
		name    string
		cur     *apiextensionsv1.CustomResourceDefinition
		err     error
		want    bool
		wantErr bool
	}{
		{name: "absent", err: notFound, want: true},
		{name: "applied by this server", cur: crd("kube-apiserver", fieldManager), want: true},
		{name: "installed by someone else", cur: crd("kubectl", "helm")},
		{name: "no managed fields", cur: crd()},
		{name: "the host cannot tell", err: errors.New("connection refused"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := shouldApplyCRD(tc.cur, tc.err)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("shouldApplyCRD = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
