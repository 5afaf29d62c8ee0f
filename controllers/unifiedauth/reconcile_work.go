package unifiedauth

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
	"github.com/flotilla-io/flotilla/names"
)

// workReconciler ships one object to a member in a Work of the member's
// execution namespace.
type workReconciler struct {
	// getWork gets a stored Work.
	getWork func(namespace, name string) (*workv1alpha1.Work, error)
	// write creates desired (cur nil) or patches cur into desired.
	write func(ctx context.Context, cur, desired *workv1alpha1.Work) error
}

// reconcile creates or updates the Work carrying obj, the cluster-scoped
// kind called ImpersonatorName, to the cluster; a Work that already
// carries it is left alone. wrote tells whether it wrote.
func (r *workReconciler) reconcile(ctx context.Context, cluster *clusterv1alpha1.Cluster, kind string, obj any) (bool, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return false, err
	}
	hash := fmt.Sprintf("%x", fnv64(string(raw)))
	ns := names.ExecutionNamespace(cluster.Name)
	name := names.WorkName(kind, ImpersonatorName, "")
	annotations := map[string]string{
		fingerprintAnnotation: hash,
		// These objects are the control plane's own: they replace whatever
		// an older Flotilla applied under the same name.
		workv1alpha2.ResourceConflictResolutionAnnotation: workv1alpha2.ResourceConflictResolutionOverwrite,
	}
	work := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Annotations: annotations,
			Finalizers:      []string{workv1alpha1.ExecutionControllerFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cluster, clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"))},
		},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
	cur, err := r.getWork(ns, name)
	if apierrors.IsNotFound(err) {
		return true, r.write(ctx, nil, work)
	}
	if err != nil {
		return false, err
	}
	// Compared as the server stores it: the stored labels (the permanent
	// id) kept, the manifests mutated.
	work.Labels = maps.Clone(cur.Labels)
	if err := mutation.MutateWork(work, false); err != nil {
		return false, err
	}
	if works.Needless(cur, work) {
		return false, nil
	}
	return true, r.write(ctx, cur, work)
}
