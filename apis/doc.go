// Package apis holds Flotilla's API types: the karmada.io groups
// (cluster, policy, work, config, autoscaling, search, networking, apps,
// remedy) and Flotilla's own flotilla.io (flotilla), one folder per group
// and version, with generated deepcopy, clients, listers, informers and
// OpenAPI under apis/generated.
package apis
