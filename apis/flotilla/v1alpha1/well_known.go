package v1alpha1

// RolloutStrategyKind is the kind of RolloutStrategy.
const RolloutStrategyKind = "RolloutStrategy"

// RolloutStrategyAnnotation on a PropagationPolicy or ClusterPropagationPolicy
// names the RolloutStrategy its placement is rolled out with.
const RolloutStrategyAnnotation = "rollout.flotilla.io/strategy"
