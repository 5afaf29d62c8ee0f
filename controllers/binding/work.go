package binding

import (
	"fmt"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/work/mutation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/failover"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/names"
)

// bindingView is what building Works needs of a ResourceBinding or a
// ClusterResourceBinding.
type bindingView struct {
	cluster   bool // a ClusterResourceBinding
	namespace string
	name      string
	id        string // permanent id
	spec      *workv1alpha2.ResourceBindingSpec
	// revisions are the template revisions (hashes) the clusters run, by
	// cluster, when the binding is rolled out by a strategy; nil otherwise.
	revisions map[string]string
	// templateHash is the template's content hash, set once (hash).
	hashOnce     sync.Once
	templateHash string
	// heldContent are the revisions decoded in this sync, by hash.
	heldContent map[string]map[string]any
	// apply are the binding's apply annotations, which its Works carry.
	apply map[string]string
}

func (b *bindingView) idLabel() string {
	if b.cluster {
		return workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	return workv1alpha2.ResourceBindingPermanentIDLabel
}

// bindingMeta is the metadata naming the binding, on Works and manifests.
func (b *bindingView) annotations() map[string]string {
	if b.cluster {
		return map[string]string{workv1alpha2.ClusterResourceBindingAnnotationKey: b.name}
	}
	return map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotationKey: b.namespace, workv1alpha2.ResourceBindingNameAnnotationKey: b.name}
}

// divided tells whether replicas are divided among clusters (else every
// cluster gets the template's replicas).
func divided(p *policyv1alpha1.Placement) bool {
	return p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided
}

// buildWork returns the Work of template for one target cluster, as the
// registry will store it (mutation applied), with id as its permanent id.
func (c *Controller) buildWork(b *bindingView, template *unstructured.Unstructured, target workv1alpha2.TargetCluster,
	cluster *clusterv1alpha1.Cluster, completions map[string]int32, id string) (*workv1alpha1.Work, error) {
	gvk := template.GroupVersionKind()
	obj := template.DeepCopy()
	var err error
	revised := false
	// A workload described by components goes whole to each of its
	// clusters (placement schedules it by sets): nothing to revise.
	if b.spec.Replicas > 0 && len(b.spec.Components) == 0 && divided(b.spec.Placement) && c.interp != nil &&
		c.interp.HookEnabled(gvk, interpreter.ReviseReplica) {
		if obj, err = c.interp.ReviseReplica(obj, int64(target.Replicas)); err != nil {
			return nil, fmt.Errorf("revising the replicas for cluster %s: %w", target.Name, err)
		}
		revised = true
	}
	if n, ok := completions[target.Name]; ok {
		if err := unstructured.SetNestedField(obj.Object, int64(n), "spec", "completions"); err != nil {
			return nil, err
		}
	}
	workAnnos := b.annotations()
	if c.overrides != nil {
		applied, err := c.overrides(obj, cluster, c.clusterOverrides(), c.namespaceOverrides(obj.GetNamespace()))
		if err != nil {
			return nil, &overrideError{cluster: target.Name, err: err}
		}
		for k, v := range applied {
			workAnnos[k] = v
		}
	}
	if err := mutation.PruneManifest(obj); err != nil {
		return nil, err
	}
	workName := names.WorkName(gvk.Kind, template.GetName(), template.GetNamespace())
	workNS := names.ExecutionNamespace(target.Name)
	conflict := workv1alpha2.ResourceConflictResolutionAbort
	if b.spec.ConflictResolution == policyv1alpha1.ConflictOverwrite {
		conflict = workv1alpha2.ResourceConflictResolutionOverwrite
	}
	workAnnos[workv1alpha2.ResourceConflictResolutionAnnotation] = conflict
	for k, v := range b.apply {
		workAnnos[k] = v
	}
	if revised {
		workAnnos[workv1alpha2.AssignedReplicasAnnotation] = strconv.FormatInt(int64(target.Replicas), 10)
	}

	lbls := obj.GetLabels()
	if lbls == nil {
		lbls = map[string]string{}
	}
	// The state a failover preserved from the cluster the workload left
	// goes, as labels, to the clusters it moved to, while the eviction is
	// open (Karmada's StatefulFailoverInjection).
	for k, v := range failover.PreservedLabels(b.spec.GracefulEvictionTasks, target.Name) {
		lbls[k] = v
	}
	lbls[workv1alpha1.ManagedByKarmadaLabel] = workv1alpha1.ManagedByKarmadaLabelValue
	lbls[b.idLabel()] = b.id
	obj.SetLabels(lbls)
	annos := obj.GetAnnotations()
	if annos == nil {
		annos = map[string]string{}
	}
	for k, v := range b.annotations() {
		annos[k] = v
	}
	annos[workv1alpha2.ResourceTemplateUIDAnnotation] = string(template.GetUID())
	annos[workv1alpha2.WorkNameAnnotation] = workName
	annos[workv1alpha2.WorkNamespaceAnnotation] = workNS
	annos[workv1alpha2.ResourceConflictResolutionAnnotation] = conflict
	annos[workv1alpha2.ResourceTemplateGenerationAnnotationKey] = strconv.FormatInt(template.GetGeneration(), 10)
	obj.SetAnnotations(annos)
	raw, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	w := &workv1alpha1.Work{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1alpha1.SchemeGroupVersion.String(), Kind: "Work"},
		ObjectMeta: metav1.ObjectMeta{
			Name: workName, Namespace: workNS,
			Labels:      map[string]string{b.idLabel(): b.id},
			Annotations: workAnnos,
			Finalizers:  []string{workv1alpha1.ExecutionControllerFinalizer},
		},
		Spec: workv1alpha1.WorkSpec{
			Workload:                    workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			SuspendDispatching:          suspended(b.spec.Suspension, target.Name),
			PreserveResourcesOnDeletion: b.spec.PreserveResourcesOnDeletion,
		},
	}
	if id != "" {
		w.Labels[workv1alpha2.WorkPermanentIDLabel] = id
	}
	if err := mutation.MutateWork(w, id == ""); err != nil {
		return nil, err
	}
	return w, nil
}

// overrideError is a failure to apply the override policies of a cluster.
type overrideError struct {
	cluster string
	err     error
}

func (e *overrideError) Error() string {
	return fmt.Sprintf("applying overrides for cluster %s: %v", e.cluster, e.err)
}

func (e *overrideError) Unwrap() error { return e.err }

// suspended is the Work's suspendDispatching for cluster: nil when not suspended.
func suspended(s *workv1alpha2.Suspension, cluster string) *bool {
	if s == nil {
		return nil
	}
	if s.Dispatching != nil && *s.Dispatching {
		return ptr.To(true)
	}
	if s.DispatchingOnClusters != nil {
		for _, n := range s.DispatchingOnClusters.ClusterNames {
			if n == cluster {
				return ptr.To(true)
			}
		}
	}
	return nil
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func gvkOf(ref workv1alpha2.ObjectReference) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
}

// jobKind is batch Job, whose completions are divided too.
var jobKind = schema.GroupKind{Group: "batch", Kind: "Job"}

func isJob(gvk schema.GroupVersionKind) bool { return gvk.GroupKind() == jobKind }
