// Package mutation applies to Clusters what Karmada's admission webhook does
// on write: the deprecated zone moves into zones, NoExecute taints get their
// time, and resource models are defaulted and normalised.
package mutation

import (
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// MutateCluster mutates c in place. create says whether c is being created:
// default resource models are added only then.
func MutateCluster(c *clusterv1alpha1.Cluster, create bool, now time.Time) {
	// zone and zones together are invalid; validation reports it, so leave both.
	if c.Spec.Zone != "" && len(c.Spec.Zones) == 0 {
		c.Spec.Zones = []string{c.Spec.Zone}
		c.Spec.Zone = ""
	}
	for i := range c.Spec.Taints {
		t := &c.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectNoExecute && t.TimeAdded == nil {
			added := metav1.NewTime(now)
			t.TimeAdded = &added
		}
	}
	if len(c.Spec.ResourceModels) == 0 {
		if create {
			c.Spec.ResourceModels = DefaultResourceModels()
		}
		return
	}
	normaliseResourceModels(c.Spec.ResourceModels)
}

// maxQuantity stands for "no upper bound" in resource models.
var maxQuantity = *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)

// DefaultResourceModels returns Karmada's nine default grades over cpu and memory.
func DefaultResourceModels() []clusterv1alpha1.ResourceModel {
	cpu := []string{"0", "1", "2", "4", "8", "16", "32", "64", "128"}
	mem := []string{"0", "4Gi", "16Gi", "32Gi", "64Gi", "128Gi", "256Gi", "512Gi", "1Ti"}
	models := make([]clusterv1alpha1.ResourceModel, len(cpu))
	for i := range cpu {
		cpuMax, memMax := maxQuantity, maxQuantity
		if i+1 < len(cpu) {
			cpuMax, memMax = resource.MustParse(cpu[i+1]), resource.MustParse(mem[i+1])
		}
		models[i] = clusterv1alpha1.ResourceModel{Grade: uint(i), Ranges: []clusterv1alpha1.ResourceModelRange{
			{Name: corev1.ResourceCPU, Min: resource.MustParse(cpu[i]), Max: cpuMax},
			{Name: corev1.ResourceMemory, Min: resource.MustParse(mem[i]), Max: memMax},
		}}
	}
	return models
}

// normaliseResourceModels sorts models by grade, and opens the first grade
// down to zero and the last one up to infinity.
func normaliseResourceModels(models []clusterv1alpha1.ResourceModel) {
	slices.SortStableFunc(models, func(a, b clusterv1alpha1.ResourceModel) int {
		switch {
		case a.Grade < b.Grade:
			return -1
		case a.Grade > b.Grade:
			return 1
		}
		return 0
	})
	for i := range models[0].Ranges {
		models[0].Ranges[i].Min = resource.MustParse("0")
	}
	last := models[len(models)-1].Ranges
	for i := range last {
		last[i].Max = maxQuantity
	}
}
