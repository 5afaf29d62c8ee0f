// Package cronfederatedhpa is the CronFederatedHPA controller (Karmada's
// cronfederatedhpa-controller): at the cron schedule of each rule that is
// not suspended it sets the minReplicas/maxReplicas of a FederatedHPA, or
// the replicas of a workload template through its scale subresource in the
// host API server, and records the execution in the CronFederatedHPA's
// status (executionHistories).
//
// It owns the timing of the rules: one planner (a min-heap of next
// execution times and a single timer) serves every CronFederatedHPA; it
// does not own the workloads or the FederatedHPAs it scales, nor the
// conflict between a CronFederatedHPA and a FederatedHPA scaling the same
// workload (Karmada documents that as the user's to avoid).
package cronfederatedhpa
