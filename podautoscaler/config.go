package podautoscaler

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// Defaults of the kube-controller-manager flags that tune the HPA
// (--horizontal-pod-autoscaler-tolerance, -cpu-initialization-period,
// -initial-readiness-delay and -downscale-stabilization).
const (
	// DefaultTolerance is the relative distance from the target within which
	// a metric causes no scaling.
	DefaultTolerance = 0.1
	// DefaultCPUInitializationPeriod is how long after its start a pod's CPU
	// samples are only trusted if the pod is ready and a whole metric window
	// was collected since it became ready.
	DefaultCPUInitializationPeriod = 5 * time.Minute
	// DefaultDelayOfInitialReadinessStatus is how long after its start a pod
	// that is not ready counts as "never been ready yet".
	DefaultDelayOfInitialReadinessStatus = 30 * time.Second
	// DefaultDownscaleStabilizationWindow is the scale-down stabilization
	// window when the FederatedHPA has no behavior, or has one without a
	// scale-down window.
	DefaultDownscaleStabilizationWindow = 5 * time.Minute
)

// Config holds the controller-wide settings of the HPA algorithm, the
// equivalent of the kube-controller-manager HPA flags. Build it with
// DefaultConfig and override fields as needed.
type Config struct {
	// Tolerance applies to both directions unless the behavior sets its own.
	Tolerance float64
	// CPUInitializationPeriod: see DefaultCPUInitializationPeriod.
	CPUInitializationPeriod time.Duration
	// DelayOfInitialReadinessStatus: see DefaultDelayOfInitialReadinessStatus.
	DelayOfInitialReadinessStatus time.Duration
	// DownscaleStabilizationWindow: see DefaultDownscaleStabilizationWindow.
	DownscaleStabilizationWindow time.Duration
}

// DefaultConfig returns the settings of a kube-controller-manager started
// without HPA flags.
func DefaultConfig() Config {
	return Config{
		Tolerance:                     DefaultTolerance,
		CPUInitializationPeriod:       DefaultCPUInitializationPeriod,
		DelayOfInitialReadinessStatus: DefaultDelayOfInitialReadinessStatus,
		DownscaleStabilizationWindow:  DefaultDownscaleStabilizationWindow,
	}
}

// Tolerances are the relative distances from 1.0 that a usage ratio (current
// over target) must exceed before it changes the replica count: a ratio in
// [1-ScaleDown, 1+ScaleUp] keeps the current count.
type Tolerances struct {
	ScaleDown float64
	ScaleUp   float64
}

// Within reports whether usageRatio is close enough to 1 to change nothing.
func (t Tolerances) Within(usageRatio float64) bool {
	return 1.0-t.ScaleDown <= usageRatio && usageRatio <= 1.0+t.ScaleUp
}

// String formats the tolerances as percentages, for logs.
func (t Tolerances) String() string {
	return fmt.Sprintf("[down:%.1f%%, up:%.1f%%]", t.ScaleDown*100., t.ScaleUp*100.)
}

// TolerancesFor returns the tolerances of a FederatedHPA with the given
// behavior: c.Tolerance, overridden per direction by the behavior's
// scaleUp.tolerance and scaleDown.tolerance (the HPAConfigurableTolerance
// feature, on by default since Kubernetes 1.35).
func (c Config) TolerancesFor(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior) Tolerances {
	t := Tolerances{ScaleDown: c.Tolerance, ScaleUp: c.Tolerance}
	if behavior == nil {
		return t
	}
	if behavior.ScaleDown != nil && behavior.ScaleDown.Tolerance != nil {
		t.ScaleDown = behavior.ScaleDown.Tolerance.AsApproximateFloat64()
	}
	if behavior.ScaleUp != nil && behavior.ScaleUp.Tolerance != nil {
		t.ScaleUp = behavior.ScaleUp.Tolerance.AsApproximateFloat64()
	}
	return t
}

// ReplicaCalculator returns the per-metric calculator with c's settings,
// for one computation at now.
func (c Config) ReplicaCalculator(tolerances Tolerances, now time.Time) ReplicaCalculator {
	return ReplicaCalculator{
		Tolerances:                    tolerances,
		CPUInitializationPeriod:       c.CPUInitializationPeriod,
		DelayOfInitialReadinessStatus: c.DelayOfInitialReadinessStatus,
		Now:                           now,
	}
}
