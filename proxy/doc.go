// Package proxy serves the clusters/{name}/proxy subresource: it forwards a
// request to the API server of a member cluster, with the caller's identity
// impersonated there by the cluster's impersonator service account.
//
// What it owns:
//   - Connecter, the rest.Connecter the cluster registry mounts as
//     clusters/proxy (connecter.go);
//   - one immutable transport snapshot per cluster, rebuilt only when the
//     cluster's connection settings or its secrets change (transport.go);
//   - dialing upgraded streams (exec, attach, port-forward) through the
//     cluster's proxyURL (dial.go);
//   - the upstream URL of a proxied path (location.go);
//   - the clusters/*/proxy fan-out across all clusters (fanout.go), whose
//     merged lists are bounded (WithMaxListBytes), and which sends
//     non-resource paths to the host API server as the caller, GET and
//     HEAD only (host.go);
//   - with WithTunnel, reaching Pull clusters through their agents' tunnels
//     (package tunnel) instead of their endpoints (transport.go).
//
// What it does not own: storage, informers and authorization. Clusters and
// Secrets come from functions the caller passes in (typically listers with a
// live GET fallback), and the caller has already authorised the request for
// clusters/proxy on the control plane; the member authorises the impersonated
// identity with its own RBAC.
package proxy
