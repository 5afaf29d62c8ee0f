package table

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// cachedFromAnnotation is the annotation the search cache adds to every
// object; it must survive in the rows' objects.
const cachedFromAnnotation = "resource.karmada.io/cached-from-cluster"

// ago returns the time d before now, to the second, as the API serves it.
func ago(now time.Time, d time.Duration) metav1.Time {
	return metav1.NewTime(now.Add(-d).Truncate(time.Second))
}

// mustJSON marshals obj as a member's API server serves it.
func mustJSON(tb testing.TB, obj any) []byte {
	tb.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		tb.Fatalf("marshaling %T: %v", obj, err)
	}
	return raw
}

// podOptions shapes a fixture pod.
type podOptions struct {
	// containers is how many containers the pod has (1 or 2).
	containers int
	// ready is how many of them are ready.
	ready int
	// restarts is the restart count of the first container; the last one
	// finished restartedAgo before now.
	restarts     int32
	restartedAgo time.Duration
	// pending leaves the pod unscheduled, without node or IP.
	pending bool
}

// kwokPod returns a pod as kwok reports it: 5 conditions, container statuses,
// a pod IP and the annotation of the search cache, about 2.5 KB of JSON.
func kwokPod(now time.Time, namespace, name string, o podOptions) *corev1.Pod {
	created := ago(now, 30*time.Minute)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         namespace,
			UID:               types.UID(fmt.Sprintf("5b0e3c1e-9d0a-4a8e-8f51-%012x", crc32.ChecksumIEEE([]byte(namespace+"/"+name)))),
			ResourceVersion:   "123456",
			CreationTimestamp: created,
			GenerateName:      "web-7d9c8b5f6d-",
			Labels:            map[string]string{"app": "web", "pod-template-hash": "7d9c8b5f6d", "tier": "frontend"},
			Annotations: map[string]string{
				cachedFromAnnotation: "member1",
				"kwok.x-k8s.io/node": "fake",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9c8b5f6d",
				UID: "0f7c2d4e-1a2b-4c3d-9e8f-7a6b5c4d3e2f", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			NodeName:                      "member1-kwok-node-3",
			RestartPolicy:                 corev1.RestartPolicyAlways,
			DNSPolicy:                     corev1.DNSClusterFirst,
			SchedulerName:                 corev1.DefaultSchedulerName,
			ServiceAccountName:            "default",
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			EnableServiceLinks:            ptr.To(true),
			Priority:                      ptr.To[int32](0),
			PreemptionPolicy:              ptr.To(corev1.PreemptLowerPriority),
			SecurityContext:               &corev1.PodSecurityContext{},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
		},
		Status: corev1.PodStatus{
			Phase:     corev1.PodRunning,
			HostIP:    "10.0.0.3",
			HostIPs:   []corev1.HostIP{{IP: "10.0.0.3"}},
			PodIP:     "10.244.3.17",
			PodIPs:    []corev1.PodIP{{IP: "10.244.3.17"}},
			StartTime: &created,
			QOSClass:  corev1.PodQOSBurstable,
		},
	}
	images := []string{"nginx:1.27", "busybox:1.36"}
	for i := range o.containers {
		cname := []string{"nginx", "sidecar"}[i]
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name:  cname,
			Image: images[i],
			Ports: []corev1.ContainerPort{{ContainerPort: int32(80 + i), Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy:          corev1.PullIfNotPresent,
		})
		status := corev1.ContainerStatus{
			Name:        cname,
			Image:       images[i],
			ImageID:     "docker.io/library/" + images[i] + "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			ContainerID: fmt.Sprintf("containerd://%064d", i),
			Ready:       i < o.ready,
			Started:     ptr.To(true),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}},
		}
		if i == 0 && o.restarts > 0 {
			status.RestartCount = o.restarts
			status.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "Error", StartedAt: created, FinishedAt: ago(now, o.restartedAgo),
			}
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, status)
	}
	ready := corev1.ConditionStatus(corev1.ConditionTrue)
	if o.ready < o.containers {
		ready = corev1.ConditionFalse
	}
	for _, c := range []struct {
		t corev1.PodConditionType
		s corev1.ConditionStatus
	}{
		{corev1.PodReadyToStartContainers, corev1.ConditionTrue},
		{corev1.PodInitialized, corev1.ConditionTrue},
		{corev1.PodReady, ready},
		{corev1.ContainersReady, ready},
		{corev1.PodScheduled, corev1.ConditionTrue},
	} {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: c.t, Status: c.s, LastTransitionTime: created})
	}
	if o.pending {
		pod.Spec.NodeName = ""
		pod.Status = corev1.PodStatus{
			Phase:    corev1.PodPending,
			QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/3 nodes are available", LastTransitionTime: created,
			}},
		}
	}
	return pod
}

// webDeployment returns a Deployment of 3 replicas with 2 containers, all
// of them updated, ready and available.
func webDeployment(now time.Time) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", CreationTimestamp: ago(now, 30*time.Minute), Generation: 2,
			Annotations: map[string]string{cachedFromAnnotation: "member1", "deployment.kubernetes.io/revision": "2"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "nginx", Image: "nginx:1.27"},
					{Name: "sidecar", Image: "busybox:1.36"},
				}},
			},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr.To(intstr.FromString("25%")), MaxSurge: ptr.To(intstr.FromString("25%")),
				},
			},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
		},
	}
}

// controlPlaneNode returns a Ready control-plane node with an internal IP.
func controlPlaneNode(now time.Time) *corev1.Node {
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "member1-control-plane", CreationTimestamp: ago(now, 3*24*time.Hour),
			Labels: map[string]string{
				"kubernetes.io/hostname":                "member1-control-plane",
				"node-role.kubernetes.io/control-plane": "",
			},
			Annotations: map[string]string{cachedFromAnnotation: "member1"},
		},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24"},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "172.18.0.2"},
				{Type: corev1.NodeHostName, Address: "member1-control-plane"},
			},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: "v1.36.3", OSImage: "Debian GNU/Linux 12 (bookworm)",
				KernelVersion: "6.1.0-18-amd64", ContainerRuntimeVersion: "containerd://2.1.1", Architecture: "amd64",
			},
		},
	}
}

// widget returns a custom resource of a kind no printer knows.
func widget(now time.Time, name string) map[string]any {
	return map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name":              name,
			"namespace":         "default",
			"creationTimestamp": ago(now, time.Hour).UTC().Format(time.RFC3339),
			"annotations":       map[string]any{cachedFromAnnotation: "member2"},
		},
		"spec": map[string]any{"size": 3},
	}
}
