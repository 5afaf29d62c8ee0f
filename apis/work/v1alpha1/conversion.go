package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// The conversions of this file map the v1alpha1 bindings to and from
// v1alpha2, the hub and storage version. v1alpha1 keeps the replica count and
// per-replica resources inside spec.resource; v1alpha2 moved them to
// spec.replicas and spec.replicaRequirements.resourceRequest. Everything else
// v1alpha2 added (placement, eviction tasks, components, uid, health, ...) has
// no v1alpha1 field and is dropped when converting down, as Karmada does.
// Outputs never share memory with inputs.

// addConversionFuncs registers the binding conversions, both directions, for
// the objects and their lists.
func addConversionFuncs(scheme *runtime.Scheme) error {
	funcs := []struct {
		from, to any
		fn       conversion.ConversionFunc
	}{
		{(*ResourceBinding)(nil), (*workv1alpha2.ResourceBinding)(nil), func(a, b any, s conversion.Scope) error {
			return Convert_v1alpha1_ResourceBinding_To_v1alpha2_ResourceBinding(a.(*ResourceBinding), b.(*workv1alpha2.ResourceBinding), s)
		}},
		{(*workv1alpha2.ResourceBinding)(nil), (*ResourceBinding)(nil), func(a, b any, s conversion.Scope) error {
			return Convert_v1alpha2_ResourceBinding_To_v1alpha1_ResourceBinding(a.(*workv1alpha2.ResourceBinding), b.(*ResourceBinding), s)
		}},
		{(*ResourceBindingList)(nil), (*workv1alpha2.ResourceBindingList)(nil), func(a, b any, s conversion.Scope) error {
			return Convert_v1alpha1_ResourceBindingList_To_v1alpha2_ResourceBindingList(a.(*ResourceBindingList), b.(*workv1alpha2.ResourceBindingList), s)
		}},
		{(*workv1alpha2.ResourceBindingList)(nil), (*ResourceBindingList)(nil), func(a, b any, s conversion.Scope) error {
			return Convert_v1alpha2_ResourceBindingList_To_v1alpha1_ResourceBindingList(a.(*workv1alpha2.ResourceBindingList), b.(*ResourceBindingList), s)
		}},
		{(*ClusterResourceBinding)(nil), (*workv1alpha2.ClusterResourceBinding)(nil), func(a, b any, s conversion.Scope) error {
			return Convert_v1alpha1_ClusterResourceBinding_To_v1alpha2_ClusterResourceBinding(a.(*ClusterResourceBinding), b.(*workv1alpha2.ClusterResourceBinding), s)
		}},
		{(*workv1alpha2.ClusterResourceBinding)(nil), (*ClusterResourceBinding)(nil), func(a, b any, s conversion.Scope) error {
			return Convert_v1alpha2_ClusterResourceBinding_To_v1alpha1_ClusterResourceBinding(a.(*workv1alpha2.ClusterResourceBinding), b.(*ClusterResourceBinding), s)
		}},
		{(*ClusterResourceBindingList)(nil), (*workv1alpha2.ClusterResourceBindingList)(nil), func(a, b any, s conversion.Scope) error {
			return Convert_v1alpha1_ClusterResourceBindingList_To_v1alpha2_ClusterResourceBindingList(a.(*ClusterResourceBindingList), b.(*workv1alpha2.ClusterResourceBindingList), s)
		}},
		{(*workv1alpha2.ClusterResourceBindingList)(nil), (*ClusterResourceBindingList)(nil), func(a, b any, s conversion.Scope) error {
			return Convert_v1alpha2_ClusterResourceBindingList_To_v1alpha1_ClusterResourceBindingList(a.(*workv1alpha2.ClusterResourceBindingList), b.(*ClusterResourceBindingList), s)
		}},
	}
	for _, f := range funcs {
		if err := scheme.AddConversionFunc(f.from, f.to, f.fn); err != nil {
			return err
		}
	}
	return nil
}

// Convert_v1alpha1_ResourceBinding_To_v1alpha2_ResourceBinding converts a
// v1alpha1 ResourceBinding to v1alpha2.
func Convert_v1alpha1_ResourceBinding_To_v1alpha2_ResourceBinding(in *ResourceBinding, out *workv1alpha2.ResourceBinding, s conversion.Scope) error {
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if err := Convert_v1alpha1_ResourceBindingSpec_To_v1alpha2_ResourceBindingSpec(&in.Spec, &out.Spec, s); err != nil {
		return err
	}
	return Convert_v1alpha1_ResourceBindingStatus_To_v1alpha2_ResourceBindingStatus(&in.Status, &out.Status, s)
}

// Convert_v1alpha2_ResourceBinding_To_v1alpha1_ResourceBinding converts a
// v1alpha2 ResourceBinding to v1alpha1, dropping what v1alpha1 cannot hold.
func Convert_v1alpha2_ResourceBinding_To_v1alpha1_ResourceBinding(in *workv1alpha2.ResourceBinding, out *ResourceBinding, s conversion.Scope) error {
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if err := Convert_v1alpha2_ResourceBindingSpec_To_v1alpha1_ResourceBindingSpec(&in.Spec, &out.Spec, s); err != nil {
		return err
	}
	return Convert_v1alpha2_ResourceBindingStatus_To_v1alpha1_ResourceBindingStatus(&in.Status, &out.Status, s)
}

// Convert_v1alpha1_ClusterResourceBinding_To_v1alpha2_ClusterResourceBinding
// converts a v1alpha1 ClusterResourceBinding to v1alpha2.
func Convert_v1alpha1_ClusterResourceBinding_To_v1alpha2_ClusterResourceBinding(in *ClusterResourceBinding, out *workv1alpha2.ClusterResourceBinding, s conversion.Scope) error {
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if err := Convert_v1alpha1_ResourceBindingSpec_To_v1alpha2_ResourceBindingSpec(&in.Spec, &out.Spec, s); err != nil {
		return err
	}
	return Convert_v1alpha1_ResourceBindingStatus_To_v1alpha2_ResourceBindingStatus(&in.Status, &out.Status, s)
}

// Convert_v1alpha2_ClusterResourceBinding_To_v1alpha1_ClusterResourceBinding
// converts a v1alpha2 ClusterResourceBinding to v1alpha1, dropping what
// v1alpha1 cannot hold.
func Convert_v1alpha2_ClusterResourceBinding_To_v1alpha1_ClusterResourceBinding(in *workv1alpha2.ClusterResourceBinding, out *ClusterResourceBinding, s conversion.Scope) error {
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if err := Convert_v1alpha2_ResourceBindingSpec_To_v1alpha1_ResourceBindingSpec(&in.Spec, &out.Spec, s); err != nil {
		return err
	}
	return Convert_v1alpha2_ResourceBindingStatus_To_v1alpha1_ResourceBindingStatus(&in.Status, &out.Status, s)
}

// Convert_v1alpha1_ResourceBindingList_To_v1alpha2_ResourceBindingList
// converts a v1alpha1 ResourceBindingList to v1alpha2.
func Convert_v1alpha1_ResourceBindingList_To_v1alpha2_ResourceBindingList(in *ResourceBindingList, out *workv1alpha2.ResourceBindingList, s conversion.Scope) error {
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]workv1alpha2.ResourceBinding, len(in.Items))
		for i := range in.Items {
			if err := Convert_v1alpha1_ResourceBinding_To_v1alpha2_ResourceBinding(&in.Items[i], &out.Items[i], s); err != nil {
				return err
			}
		}
	}
	return nil
}

// Convert_v1alpha2_ResourceBindingList_To_v1alpha1_ResourceBindingList
// converts a v1alpha2 ResourceBindingList to v1alpha1.
func Convert_v1alpha2_ResourceBindingList_To_v1alpha1_ResourceBindingList(in *workv1alpha2.ResourceBindingList, out *ResourceBindingList, s conversion.Scope) error {
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]ResourceBinding, len(in.Items))
		for i := range in.Items {
			if err := Convert_v1alpha2_ResourceBinding_To_v1alpha1_ResourceBinding(&in.Items[i], &out.Items[i], s); err != nil {
				return err
			}
		}
	}
	return nil
}

// Convert_v1alpha1_ClusterResourceBindingList_To_v1alpha2_ClusterResourceBindingList
// converts a v1alpha1 ClusterResourceBindingList to v1alpha2.
func Convert_v1alpha1_ClusterResourceBindingList_To_v1alpha2_ClusterResourceBindingList(in *ClusterResourceBindingList, out *workv1alpha2.ClusterResourceBindingList, s conversion.Scope) error {
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]workv1alpha2.ClusterResourceBinding, len(in.Items))
		for i := range in.Items {
			if err := Convert_v1alpha1_ClusterResourceBinding_To_v1alpha2_ClusterResourceBinding(&in.Items[i], &out.Items[i], s); err != nil {
				return err
			}
		}
	}
	return nil
}

// Convert_v1alpha2_ClusterResourceBindingList_To_v1alpha1_ClusterResourceBindingList
// converts a v1alpha2 ClusterResourceBindingList to v1alpha1.
func Convert_v1alpha2_ClusterResourceBindingList_To_v1alpha1_ClusterResourceBindingList(in *workv1alpha2.ClusterResourceBindingList, out *ClusterResourceBindingList, s conversion.Scope) error {
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]ClusterResourceBinding, len(in.Items))
		for i := range in.Items {
			if err := Convert_v1alpha2_ClusterResourceBinding_To_v1alpha1_ClusterResourceBinding(&in.Items[i], &out.Items[i], s); err != nil {
				return err
			}
		}
	}
	return nil
}

// Convert_v1alpha1_ResourceBindingSpec_To_v1alpha2_ResourceBindingSpec
// converts a v1alpha1 binding spec to v1alpha2: spec.resource.replicas
// becomes spec.replicas and spec.resource.resourcePerReplicas becomes
// spec.replicaRequirements.resourceRequest. The v1alpha2-only fields of out
// are reset.
func Convert_v1alpha1_ResourceBindingSpec_To_v1alpha2_ResourceBindingSpec(in *ResourceBindingSpec, out *workv1alpha2.ResourceBindingSpec, _ conversion.Scope) error {
	*out = workv1alpha2.ResourceBindingSpec{
		Resource: workv1alpha2.ObjectReference{
			APIVersion:      in.Resource.APIVersion,
			Kind:            in.Resource.Kind,
			Namespace:       in.Resource.Namespace,
			Name:            in.Resource.Name,
			ResourceVersion: in.Resource.ResourceVersion,
		},
		Replicas: in.Resource.Replicas,
	}
	if len(in.Resource.ReplicaResourceRequirements) > 0 {
		out.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{
			ResourceRequest: in.Resource.ReplicaResourceRequirements.DeepCopy(),
		}
	}
	if in.Clusters != nil {
		out.Clusters = make([]workv1alpha2.TargetCluster, len(in.Clusters))
		for i, c := range in.Clusters {
			out.Clusters[i] = workv1alpha2.TargetCluster{Name: c.Name, Replicas: c.Replicas}
		}
	}
	return nil
}

// Convert_v1alpha2_ResourceBindingSpec_To_v1alpha1_ResourceBindingSpec
// converts a v1alpha2 binding spec to v1alpha1: spec.replicas and
// spec.replicaRequirements.resourceRequest move into spec.resource, and the
// fields v1alpha1 has no room for are dropped.
func Convert_v1alpha2_ResourceBindingSpec_To_v1alpha1_ResourceBindingSpec(in *workv1alpha2.ResourceBindingSpec, out *ResourceBindingSpec, _ conversion.Scope) error {
	*out = ResourceBindingSpec{
		Resource: ObjectReference{
			APIVersion:      in.Resource.APIVersion,
			Kind:            in.Resource.Kind,
			Namespace:       in.Resource.Namespace,
			Name:            in.Resource.Name,
			ResourceVersion: in.Resource.ResourceVersion,
			Replicas:        in.Replicas,
		},
	}
	if in.ReplicaRequirements != nil && len(in.ReplicaRequirements.ResourceRequest) > 0 {
		out.Resource.ReplicaResourceRequirements = in.ReplicaRequirements.ResourceRequest.DeepCopy()
	}
	if in.Clusters != nil {
		out.Clusters = make([]TargetCluster, len(in.Clusters))
		for i, c := range in.Clusters {
			out.Clusters[i] = TargetCluster{Name: c.Name, Replicas: c.Replicas}
		}
	}
	return nil
}

// Convert_v1alpha1_ResourceBindingStatus_To_v1alpha2_ResourceBindingStatus
// converts a v1alpha1 binding status to v1alpha2.
func Convert_v1alpha1_ResourceBindingStatus_To_v1alpha2_ResourceBindingStatus(in *ResourceBindingStatus, out *workv1alpha2.ResourceBindingStatus, _ conversion.Scope) error {
	*out = workv1alpha2.ResourceBindingStatus{}
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	if in.AggregatedStatus != nil {
		out.AggregatedStatus = make([]workv1alpha2.AggregatedStatusItem, len(in.AggregatedStatus))
		for i, item := range in.AggregatedStatus {
			out.AggregatedStatus[i] = workv1alpha2.AggregatedStatusItem{
				ClusterName:    item.ClusterName,
				Status:         item.Status.DeepCopy(),
				Applied:        item.Applied,
				AppliedMessage: item.AppliedMessage,
			}
		}
	}
	return nil
}

// Convert_v1alpha2_ResourceBindingStatus_To_v1alpha1_ResourceBindingStatus
// converts a v1alpha2 binding status to v1alpha1; the scheduler fields and
// the per-cluster health are dropped.
func Convert_v1alpha2_ResourceBindingStatus_To_v1alpha1_ResourceBindingStatus(in *workv1alpha2.ResourceBindingStatus, out *ResourceBindingStatus, _ conversion.Scope) error {
	*out = ResourceBindingStatus{}
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	if in.AggregatedStatus != nil {
		out.AggregatedStatus = make([]AggregatedStatusItem, len(in.AggregatedStatus))
		for i, item := range in.AggregatedStatus {
			out.AggregatedStatus[i] = AggregatedStatusItem{
				ClusterName:    item.ClusterName,
				Status:         item.Status.DeepCopy(),
				Applied:        item.Applied,
				AppliedMessage: item.AppliedMessage,
			}
		}
	}
	return nil
}
