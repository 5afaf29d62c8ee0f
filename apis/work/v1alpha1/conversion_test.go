package v1alpha1

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

var testTime = metav1.NewTime(time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC))

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := workv1alpha2.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// fullV1alpha2Spec sets every field of a v1alpha2 binding spec.
func fullV1alpha2Spec() workv1alpha2.ResourceBindingSpec {
	nodeClaim := &workv1alpha2.NodeClaim{
		HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
		}}},
		NodeSelector: map[string]string{"disk": "ssd"},
		Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
	}
	return workv1alpha2.ResourceBindingSpec{
		Resource: workv1alpha2.ObjectReference{
			APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx",
			UID: "0c9f7d3e", ResourceVersion: "42",
		},
		PropagateDeps: true,
		ReplicaRequirements: &workv1alpha2.ReplicaRequirements{
			NodeClaim:         nodeClaim,
			ResourceRequest:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Namespace:         "default",
			PriorityClassName: "high",
		},
		Replicas: 3,
		Components: []workv1alpha2.Component{{
			Name: "worker", Replicas: 3,
			ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{
				NodeClaim:         nodeClaim,
				ResourceRequest:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				PriorityClassName: "high",
			},
		}},
		Clusters: []workv1alpha2.TargetCluster{
			{Name: "member1", Replicas: 2, Components: []workv1alpha2.TargetComponent{{Name: "worker", Replicas: 2}}},
			{Name: "member2", Replicas: 1},
		},
		Placement: &policyv1alpha1.Placement{
			ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		},
		GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{
			FromCluster: "member3", PurgeMode: policyv1alpha1.PurgeModeGracefully, Replicas: ptr.To[int32](1),
			Reason: workv1alpha2.EvictionReasonTaintUntolerated, Message: "tainted",
			Producer: workv1alpha2.EvictionProducerTaintManager, GracePeriodSeconds: ptr.To[int32](600),
			SuppressDeletion: ptr.To(false), PreservedLabelState: map[string]string{"k": "v"},
			ClustersBeforeFailover: []string{"member3"}, CreationTimestamp: &testTime,
		}},
		RequiredBy: []workv1alpha2.BindingSnapshot{{
			Namespace: "default", Name: "app-deployment", Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}},
		}},
		SchedulerName: "default-scheduler",
		Failover: &policyv1alpha1.FailoverBehavior{
			Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly},
		},
		ConflictResolution:    policyv1alpha1.ConflictOverwrite,
		RescheduleTriggeredAt: &testTime,
		Suspension: &workv1alpha2.Suspension{
			Suspension: policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}},
			Scheduling: ptr.To(true),
		},
		PreserveResourcesOnDeletion: ptr.To(true),
		SchedulePriority:            &workv1alpha2.SchedulePriority{Priority: 7},
		WorkloadAffinityGroups:      &workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "app=a", AntiAffinityGroup: "app=b"},
	}
}

// fullV1alpha2Status sets every field of a v1alpha2 binding status.
func fullV1alpha2Status() workv1alpha2.ResourceBindingStatus {
	return workv1alpha2.ResourceBindingStatus{
		SchedulerObservedGeneration:   4,
		SchedulerObservedAffinityName: "primary",
		LastScheduledTime:             &testTime,
		Conditions: []metav1.Condition{{
			Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: workv1alpha2.BindingReasonSuccess,
			Message: "Binding has been scheduled successfully.", LastTransitionTime: testTime, ObservedGeneration: 4,
		}},
		AggregatedStatus: []workv1alpha2.AggregatedStatusItem{{
			ClusterName: "member1", Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)},
			Applied: true, AppliedMessage: "ok", Health: workv1alpha2.ResourceHealthy,
		}},
	}
}

func testMeta(namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: "nginx-deployment", Namespace: namespace, UID: "7e57", ResourceVersion: "9", Generation: 4,
		Labels:      map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "3f1c"},
		Annotations: map[string]string{workv1alpha2.AppliedPlacementAnnotation: "{}"},
		Finalizers:  []string{workv1alpha2.BindingControllerFinalizer},
	}
}

// expressibleInV1alpha1 keeps from a v1alpha2 spec and status only what the
// v1alpha1 schema can hold.
func expressibleInV1alpha1(spec workv1alpha2.ResourceBindingSpec, status workv1alpha2.ResourceBindingStatus) (workv1alpha2.ResourceBindingSpec, workv1alpha2.ResourceBindingStatus) {
	outSpec := workv1alpha2.ResourceBindingSpec{
		Resource: workv1alpha2.ObjectReference{
			APIVersion: spec.Resource.APIVersion, Kind: spec.Resource.Kind, Namespace: spec.Resource.Namespace,
			Name: spec.Resource.Name, ResourceVersion: spec.Resource.ResourceVersion,
		},
		Replicas: spec.Replicas,
	}
	if spec.ReplicaRequirements != nil && len(spec.ReplicaRequirements.ResourceRequest) > 0 {
		outSpec.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{ResourceRequest: spec.ReplicaRequirements.ResourceRequest}
	}
	for _, c := range spec.Clusters {
		outSpec.Clusters = append(outSpec.Clusters, workv1alpha2.TargetCluster{Name: c.Name, Replicas: c.Replicas})
	}
	outStatus := workv1alpha2.ResourceBindingStatus{Conditions: status.Conditions}
	for _, item := range status.AggregatedStatus {
		outStatus.AggregatedStatus = append(outStatus.AggregatedStatus, workv1alpha2.AggregatedStatusItem{
			ClusterName: item.ClusterName, Status: item.Status, Applied: item.Applied, AppliedMessage: item.AppliedMessage,
		})
	}
	return outSpec, outStatus
}

func TestResourceBindingRoundTripThroughV1alpha1(t *testing.T) {
	t.Parallel()
	s := testScheme(t)
	fullSpec, fullStatus := fullV1alpha2Spec(), fullV1alpha2Status()
	emptyReqSpec := fullV1alpha2Spec()
	emptyReqSpec.ReplicaRequirements.ResourceRequest = nil

	tests := []struct {
		name   string
		spec   workv1alpha2.ResourceBindingSpec
		status workv1alpha2.ResourceBindingStatus
	}{
		{name: "every field set", spec: fullSpec, status: fullStatus},
		{name: "empty", spec: workv1alpha2.ResourceBindingSpec{}, status: workv1alpha2.ResourceBindingStatus{}},
		{name: "replica requirements without resources", spec: emptyReqSpec, status: fullStatus},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantSpec, wantStatus := expressibleInV1alpha1(tc.spec, tc.status)

			rb := &workv1alpha2.ResourceBinding{ObjectMeta: testMeta("default"), Spec: tc.spec, Status: tc.status}
			before := rb.DeepCopy()
			v1 := &ResourceBinding{}
			if err := s.Convert(rb, v1, nil); err != nil {
				t.Fatalf("v1alpha2 -> v1alpha1: %v", err)
			}
			back := &workv1alpha2.ResourceBinding{}
			if err := s.Convert(v1, back, nil); err != nil {
				t.Fatalf("v1alpha1 -> v1alpha2: %v", err)
			}
			want := &workv1alpha2.ResourceBinding{ObjectMeta: testMeta("default"), Spec: wantSpec, Status: wantStatus}
			if !apiequality.Semantic.DeepEqual(want, back) {
				t.Errorf("ResourceBinding round trip (-want +got):\n%s", diff.Diff(want, back))
			}
			if !apiequality.Semantic.DeepEqual(before, rb) {
				t.Errorf("conversion modified its input:\n%s", diff.Diff(before, rb))
			}

			crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: testMeta(""), Spec: tc.spec, Status: tc.status}
			crbV1 := &ClusterResourceBinding{}
			if err := s.Convert(crb, crbV1, nil); err != nil {
				t.Fatalf("v1alpha2 -> v1alpha1: %v", err)
			}
			crbBack := &workv1alpha2.ClusterResourceBinding{}
			if err := s.Convert(crbV1, crbBack, nil); err != nil {
				t.Fatalf("v1alpha1 -> v1alpha2: %v", err)
			}
			wantCRB := &workv1alpha2.ClusterResourceBinding{ObjectMeta: testMeta(""), Spec: wantSpec, Status: wantStatus}
			if !apiequality.Semantic.DeepEqual(wantCRB, crbBack) {
				t.Errorf("ClusterResourceBinding round trip (-want +got):\n%s", diff.Diff(wantCRB, crbBack))
			}
		})
	}
}

// fullV1alpha1 sets every field of a v1alpha1 binding.
func fullV1alpha1() *ResourceBinding {
	return &ResourceBinding{
		ObjectMeta: testMeta("default"),
		Spec: ResourceBindingSpec{
			Resource: ObjectReference{
				APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx", ResourceVersion: "42",
				ReplicaResourceRequirements: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
				Replicas:                    5,
			},
			Clusters: []TargetCluster{{Name: "member1", Replicas: 3}, {Name: "member2", Replicas: 2}},
		},
		Status: ResourceBindingStatus{
			Conditions: []metav1.Condition{{
				Type: workv1alpha2.FullyApplied, Status: metav1.ConditionFalse, Reason: workv1alpha2.FullyAppliedFailedReason,
				LastTransitionTime: testTime,
			}},
			AggregatedStatus: []AggregatedStatusItem{{
				ClusterName: "member1", Status: &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)}, Applied: false, AppliedMessage: "conflict",
			}},
		},
	}
}

func TestV1alpha1RoundTripThroughV1alpha2(t *testing.T) {
	t.Parallel()
	s := testScheme(t)

	in := fullV1alpha1()
	hub := &workv1alpha2.ResourceBinding{}
	if err := s.Convert(in, hub, nil); err != nil {
		t.Fatal(err)
	}
	if hub.Spec.Replicas != 5 || hub.Spec.ReplicaRequirements == nil ||
		!hub.Spec.ReplicaRequirements.ResourceRequest.Cpu().Equal(resource.MustParse("250m")) {
		t.Errorf("replicas/resourcePerReplicas not moved to spec: %+v", hub.Spec)
	}
	out := &ResourceBinding{}
	if err := s.Convert(hub, out, nil); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(in, out) {
		t.Errorf("round trip (-want +got):\n%s", diff.Diff(in, out))
	}

	crbIn := &ClusterResourceBinding{ObjectMeta: testMeta(""), Spec: in.Spec, Status: in.Status}
	crbHub := &workv1alpha2.ClusterResourceBinding{}
	if err := s.Convert(crbIn, crbHub, nil); err != nil {
		t.Fatal(err)
	}
	crbOut := &ClusterResourceBinding{}
	if err := s.Convert(crbHub, crbOut, nil); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(crbIn, crbOut) {
		t.Errorf("ClusterResourceBinding round trip (-want +got):\n%s", diff.Diff(crbIn, crbOut))
	}
}

func TestListConversion(t *testing.T) {
	t.Parallel()
	s := testScheme(t)

	item := fullV1alpha1()
	list := &ResourceBindingList{ListMeta: metav1.ListMeta{ResourceVersion: "77"}, Items: []ResourceBinding{*item, *item}}
	hubList := &workv1alpha2.ResourceBindingList{}
	if err := s.Convert(list, hubList, nil); err != nil {
		t.Fatal(err)
	}
	if len(hubList.Items) != 2 || hubList.ResourceVersion != "77" || hubList.Items[1].Spec.Replicas != 5 {
		t.Fatalf("unexpected v1alpha2 list: %+v", hubList)
	}
	back := &ResourceBindingList{}
	if err := s.Convert(hubList, back, nil); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(list, back) {
		t.Errorf("list round trip (-want +got):\n%s", diff.Diff(list, back))
	}

	crbList := &ClusterResourceBindingList{Items: []ClusterResourceBinding{{ObjectMeta: testMeta(""), Spec: item.Spec}}}
	crbHub := &workv1alpha2.ClusterResourceBindingList{}
	if err := s.Convert(crbList, crbHub, nil); err != nil {
		t.Fatal(err)
	}
	crbBack := &ClusterResourceBindingList{}
	if err := s.Convert(crbHub, crbBack, nil); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(crbList, crbBack) {
		t.Errorf("cluster list round trip (-want +got):\n%s", diff.Diff(crbList, crbBack))
	}
}

func TestConvertToVersion(t *testing.T) {
	t.Parallel()
	s := testScheme(t)

	hub := &workv1alpha2.ResourceBinding{ObjectMeta: testMeta("default"), Spec: fullV1alpha2Spec()}
	obj, err := s.ConvertToVersion(hub, SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	v1, ok := obj.(*ResourceBinding)
	if !ok {
		t.Fatalf("got %T, want *v1alpha1.ResourceBinding", obj)
	}
	if gvk := v1.GroupVersionKind(); gvk != SchemeGroupVersion.WithKind("ResourceBinding") {
		t.Errorf("kind = %v", gvk)
	}
	if v1.Spec.Resource.Replicas != 3 || len(v1.Spec.Resource.ReplicaResourceRequirements) != 2 {
		t.Errorf("spec.resource = %+v", v1.Spec.Resource)
	}
}

func TestConversionDoesNotShareMemory(t *testing.T) {
	t.Parallel()
	s := testScheme(t)

	in := fullV1alpha1()
	hub := &workv1alpha2.ResourceBinding{}
	if err := s.Convert(in, hub, nil); err != nil {
		t.Fatal(err)
	}
	hub.Labels["x"] = "y"
	hub.Spec.ReplicaRequirements.ResourceRequest[corev1.ResourceCPU] = resource.MustParse("9")
	hub.Status.AggregatedStatus[0].Status.Raw[0] = '['
	hub.Status.Conditions[0].Reason = "Changed"
	if !apiequality.Semantic.DeepEqual(fullV1alpha1(), in) {
		t.Errorf("changing the output changed the input:\n%s", diff.Diff(fullV1alpha1(), in))
	}
}
