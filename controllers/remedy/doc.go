// Package remedy keeps clusters' status.remedyActions as the Remedies say:
// a cluster carries the actions of every Remedy that selects it (no
// clusterAffinity: every cluster; otherwise the clusters it names) and
// whose decisionMatches hold on its status conditions (none: always; else
// any one of them). The arithmetic (Actions) is pure; the controller reads
// the Cluster and Remedy caches and writes a cluster's actions with one
// merge patch of its status subresource, guarded by its resourceVersion,
// only when they change. Karmada's remedy controller records no events,
// and neither does this one. It owns status.remedyActions: no other writer
// of the cluster status writes that field.
package remedy
