// Package top is `top pods|nodes` over member clusters, as karmadactl top
// does it: each member's metrics.k8s.io (its metrics-server) is read
// through the control plane's clusters/{name}/proxy as the caller,
// concurrently, and one table names the cluster of every row. A member
// that fails is an error naming it ("cluster(member2): ..."), the rows of
// the others are still printed.
//
// It owns reading, merging and printing; the command's flags are
// cmd/flotillactl's, and the proxy's client configuration is
// cli/clusterproxy's.
package top
