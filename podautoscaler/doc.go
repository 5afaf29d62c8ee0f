// Package podautoscaler is the algorithm of the FederatedHPA controller: the
// Kubernetes HorizontalPodAutoscaler algorithm (kube-controller-manager
// v1.36, pkg/controller/podautoscaler), computed over pods that live in
// several member clusters.
//
// The package does no I/O and reads no clock: it has no clients, informers
// or listers, and every function that depends on time takes a now argument.
// The split with the controller (controllers/federatedhpa) is:
//
//   - The controller reads the FederatedHPA, finds the target's
//     ResourceBinding and member clusters, sums the members' scale
//     subresources (spec and status replicas, selector), lists the matching
//     pods in every member (NewPod converts them; pods are keyed by
//     cluster, namespace and name, since names may repeat across clusters)
//     and reads each metric of the spec from the metrics adapter
//     (MetricData, read errors included).
//   - Config.Recommend computes the desired replica count from that Input:
//     the per-metric replica calculations (ReplicaCalculator), the maximum
//     over metrics with upstream's handling of invalid metrics, the
//     stabilization windows, the scaling policies of the behavior (or the
//     fixed limits without one), the min/max bounds, the status conditions
//     (AbleToScale, ScalingActive, ScalingLimited) with upstream's reasons
//     and messages, the rescale reason and the events to record.
//   - The controller updates the scale subresource of the resource template
//     when Recommendation.Rescale is set, reports the outcome with
//     Recommendation.Rescaled or RescaleFailed, writes
//     Recommendation.Status, records Recommendation.Events, and returns
//     Recommendation.Err as the sync's error.
//   - What upstream keeps in memory between syncs (recent recommendations
//     and scale events) is a History value that the controller owns, one
//     per FederatedHPA, and passes to every call.
//
// Like kube-controller-manager with default feature gates, the algorithm
// honours behavior tolerances (HPAConfigurableTolerance) and pod-level
// requests (PodLevelResources), and does not scale from or to zero
// (HPAScaleToZero): a target with zero replicas disables autoscaling.
package podautoscaler
