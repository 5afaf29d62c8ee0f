// Package failover decides evictions, without clients: which clusters a
// binding leaves for their NoExecute taints and when (NoExecuteEvictions),
// what a GracefulEvictionTask becomes (AssessTask), and when eviction must
// pause because too many clusters fail at once (Valve); and what the
// descheduler takes off clusters whose members cannot schedule replicas
// (Deschedule). The controllers read their caches, call these, and write
// once.
package failover
