package v1alpha1

// WorkloadRebalancerKind is the kind of WorkloadRebalancer.
const WorkloadRebalancerKind = "WorkloadRebalancer"
