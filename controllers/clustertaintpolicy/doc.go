// Package clustertaintpolicy adds and removes Cluster taints as
// ClusterTaintPolicies say, from the clusters' status conditions: every
// policy whose targetClusters select a cluster is applied in creation
// order; when all its addOnConditions match the cluster's conditions its
// taints are added (timeAdded now), when all its removeOnConditions match
// they are removed. Empty condition lists never match. As in Karmada,
// deleting a policy leaves the taints it added. The taint arithmetic
// (Taints) is pure; the controller reads caches and writes each cluster's
// taints with one patch guarded by its resourceVersion, recording
// TaintClusterSucceed or TaintClusterFailed on the cluster.
package clustertaintpolicy
