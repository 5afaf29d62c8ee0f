// Package inventory is the consumer side of the ClusterProfiles Flotilla
// publishes (the SIG-Multicluster Cluster Inventory API): flotillactl
// inventory credential, the exec credential plugin a consumer's provider
// file names (it hands client-go the caller's own credentials for the
// control plane, whose cluster proxy every profile's access provider
// points at), and flotillactl inventory provider-file, which prints that
// provider file.
package inventory
