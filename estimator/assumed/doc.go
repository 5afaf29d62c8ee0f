// Package assumed keeps, per member cluster, what the scheduler has
// assigned and the member does not show as pods yet: Karmada's assumed
// workloads (its scheduling overcommit protection). The estimates of a
// member take them as used (estimator.Assumed), so that workloads
// scheduled one after the other, faster than their pods appear, do not
// all take the same room.
//
// It owns the bookkeeping only: a concurrency-safe Cache that the
// scheduler feeds with its writes (Assume) and with what it observes of
// the bindings (Observe, Forget), and asks for a cluster's assumptions
// (For). It reads no API server.
//
// The state lives in the memory of the scheduler that made the decisions,
// the leader: a new leader starts with nothing assumed, as Karmada's
// scheduler does after a restart, and the estimates count only the pods
// until the members show the workloads placed before.
package assumed
