package v1alpha1

import "k8s.io/utils/ptr"

// Default values of the policy API (Karmada's CRD schema defaults).
const (
	// DefaultSchedulerName is the scheduler of policies that name none.
	DefaultSchedulerName = "default-scheduler"
	// DefaultTolerationSeconds is how long an application may be unhealthy before failing over.
	DefaultTolerationSeconds int32 = 300
	// DefaultGracePeriodSeconds is how long a Gracefully purged application is kept;
	// set by the mutating admission (package mutation), not by the scheme.
	DefaultGracePeriodSeconds int32 = 600
)

// The SetDefaults_<Type> functions below hold only the defaults that need no
// context (no namespace, no create/update distinction); defaulter-gen calls
// them from zz_generated.defaults.go wherever the type occurs (hence the
// underscore names). The effects of Karmada's mutating webhook live in
// package mutation.

// SetDefaults_PropagationSpec defaults priority (0), preemption (Never),
// conflictResolution (Abort) and schedulerName (default-scheduler).
func SetDefaults_PropagationSpec(s *PropagationSpec) {
	if s.Priority == nil {
		s.Priority = ptr.To[int32](0)
	}
	if s.Preemption == "" {
		s.Preemption = PreemptNever
	}
	if s.ConflictResolution == "" {
		s.ConflictResolution = ConflictAbort
	}
	if s.SchedulerName == "" {
		s.SchedulerName = DefaultSchedulerName
	}
}

// SetDefaults_ReplicaSchedulingStrategy defaults replicaSchedulingType to Divided.
func SetDefaults_ReplicaSchedulingStrategy(s *ReplicaSchedulingStrategy) {
	if s.ReplicaSchedulingType == "" {
		s.ReplicaSchedulingType = ReplicaSchedulingTypeDivided
	}
}

// SetDefaults_ApplicationFailoverBehavior defaults purgeMode to Gracefully.
func SetDefaults_ApplicationFailoverBehavior(b *ApplicationFailoverBehavior) {
	if b.PurgeMode == "" {
		b.PurgeMode = PurgeModeGracefully
	}
}

// SetDefaults_DecisionConditions defaults tolerationSeconds to 300.
func SetDefaults_DecisionConditions(c *DecisionConditions) {
	if c.TolerationSeconds == nil {
		c.TolerationSeconds = ptr.To(DefaultTolerationSeconds)
	}
}

// SetDefaults_ClusterFailoverBehavior defaults purgeMode to Gracefully.
func SetDefaults_ClusterFailoverBehavior(b *ClusterFailoverBehavior) {
	if b.PurgeMode == "" {
		b.PurgeMode = PurgeModeGracefully
	}
}
