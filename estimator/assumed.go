package estimator

import (
	corev1 "k8s.io/api/core/v1"
)

// Assumed is what a member has been assigned by the scheduler and does not
// show as pods yet (Karmada's assumed workloads, from its scheduling
// overcommit protection): the estimates count it as taken, so that
// workloads scheduled one after the other before their pods appear do not
// all take the same room. The zero Assumed is nothing assumed.
type Assumed struct {
	// Nodes is what the assumed replicas of every namespace take of the
	// member's nodes: a pod slot each and their requests (NodeSum).
	Nodes Usage
	// Quota is what the assumed replicas of the estimate's namespace take
	// of its ResourceQuotas, by the replicas' priority class ("" for
	// none), which decides the quotas they count in (QuotaReplicasAssuming).
	Quota map[string]Usage
}

// IsZero reports whether nothing is assumed.
func (a Assumed) IsZero() bool { return a.Nodes.empty() && len(a.Quota) == 0 }

func (u Usage) empty() bool { return u.pods == 0 && len(u.requests) == 0 }

// UsageOf returns the usage of pods pod slots and requests, in the units
// of Value; requests is kept, not copied.
func UsageOf(pods int64, requests map[corev1.ResourceName]int64) Usage {
	if requests == nil {
		requests = map[corev1.ResourceName]int64{}
	}
	return Usage{pods: pods, requests: requests}
}

// NodeSum adds up, over the nodes a replica may be placed on, what each
// still fits (Replica.Fits) and what each has free, so that the estimate
// can be lowered by assumed replicas whose nodes are not known yet
// (Replicas).
type NodeSum struct {
	r    *Replica
	fits int64
	// pods and free are the free pod slots and the free amount of each
	// resource the replica requests (r.request order), summed over the
	// nodes, each node's counted from zero up.
	pods int64
	free []int64
}

// Sum starts a NodeSum of no node.
func (r *Replica) Sum() *NodeSum {
	return &NodeSum{r: r, free: make([]int64, len(r.request))}
}

// Add counts node, on which the pods bound there use used. It does not
// check Matches.
func (s *NodeSum) Add(node *corev1.Node, used Usage) {
	fits, pods := s.r.fit(node, used, s.free)
	s.fits += fits
	s.pods += pods
}

// Replicas returns how many more replicas the nodes added run once the
// assumed replicas have taken their share: the sum of what each node
// fits, lowered to what the nodes' free room summed over them, minus
// what assumed takes, leaves (min(free pods, floor(free/request) for
// every resource the replica requests)), never negative.
//
// Which node an assumed replica will land on is the member scheduler's
// choice, not known here, so it is taken from the sum of the nodes, not
// from one node: the result is never more than the estimate without
// assumptions and never more than the summed room leaves. It can still
// be more than the member will run when the assumed pods fragment the
// nodes (two nodes with 1.5 CPUs free each fit two 1-CPU replicas; one
// assumed 1-CPU pod on either leaves one, the sum says two minus nothing
// of the per-node fits); Karmada's scheduler estimator places assumed
// pods first-fit on its node snapshot instead, and its general estimator
// subtracts from the cluster's totals, as here. Assumed replicas are
// subtracted even where their own node claims would keep them off these
// nodes, which errs towards fewer replicas.
func (s *NodeSum) Replicas(assumed Usage) int64 {
	if assumed.empty() {
		return s.fits
	}
	n := min(s.fits, s.pods-assumed.pods)
	for i, a := range s.r.request {
		n = min(n, (s.free[i]-assumed.requests[a.name])/a.value)
	}
	return max(n, 0)
}
