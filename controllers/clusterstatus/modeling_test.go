package clusterstatus

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/apis/cluster/mutation"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

func node(name, cpu, mem, pods string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse(pods)}}}
}

func TestAllocatableModelings(t *testing.T) {
	t.Parallel()
	models := mutation.DefaultResourceModels()
	nodes := []*corev1.Node{
		node("empty", "32", "256Gi", "110"),   // cpu [32,64) and memory [256Gi,512Gi): grade 6
		node("busy", "32", "256Gi", "110"),    // 30 cpu used: 2 free -> grade 2
		node("small-mem", "64", "8Gi", "110"), // memory [4Gi,16Gi) grade 1 -> 1
		node("full", "32", "256Gi", "2"),      // no pod slot left: not counted
		node("over", "1", "1Gi", "110"),       // over-committed cpu: below the first model, not counted
	}
	used := map[string]corev1.ResourceList{
		"busy": {corev1.ResourceCPU: resource.MustParse("30")},
		"over": {corev1.ResourceCPU: resource.MustParse("2")},
	}
	podCount := map[string]int64{"busy": 3, "full": 2, "over": 1}
	got := allocatableModelings(models, nodes, used, podCount)
	want := make([]clusterv1alpha1.AllocatableModeling, len(models))
	for i := range want {
		want[i].Grade = uint(i)
	}
	want[6].Count, want[2].Count, want[1].Count = 1, 1, 1
	if !reflect.DeepEqual(got, want) {
		t.Errorf("allocatableModelings\n got %+v\nwant %+v", got, want)
	}
	if allocatableModelings(nil, nodes, used, podCount) != nil || allocatableModelings(models, nil, used, podCount) != nil {
		t.Error("no models or no nodes should give no modelings")
	}
}
