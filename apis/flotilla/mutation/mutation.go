// Package mutation applies the defaults of RolloutStrategies. The registry
// strategy calls it before validation on create and update; it never fails.
package mutation

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// The defaults of a stage's fields.
const (
	DefaultMaxConcurrency   = "100%"
	DefaultProgressDeadline = 10 * time.Minute
)

// MutateRolloutStrategy sets the defaults of s in place: newClusters
// Immediately and, for every stage,
// maxConcurrency "100%", soakTime 0, progressDeadline 10m, maxFailures 0.
func MutateRolloutStrategy(s *flotillav1alpha1.RolloutStrategy) {
	if s.Spec.NewClusters == "" {
		s.Spec.NewClusters = flotillav1alpha1.NewClustersImmediately
	}
	for i := range s.Spec.Stages {
		st := &s.Spec.Stages[i]
		if st.MaxConcurrency == nil {
			c := intstr.FromString(DefaultMaxConcurrency)
			st.MaxConcurrency = &c
		}
		if st.SoakTime == nil {
			st.SoakTime = &metav1.Duration{}
		}
		if st.ProgressDeadline == nil {
			st.ProgressDeadline = &metav1.Duration{Duration: DefaultProgressDeadline}
		}
		if st.MaxFailures == nil {
			st.MaxFailures = new(int32)
		}
	}
}
