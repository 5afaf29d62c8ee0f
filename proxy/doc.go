// Package proxy serves the clusters/{name}/proxy subresource: it forwards a
// request to the API server of a member cluster, with the caller's identity
// impersonated there by the cluster's impersonator service account.
//
// What it owns:
//   - Connecter, the rest.Connecter the cluster registry mounts as
//     clusters/proxy (connecter.go);
//   - the decision whether a cluster can be proxied to (it exists and is
//     Ready), and the impersonating round trippers over its transport
//     (transport.go);
//   - the upstream URL of a proxied path (location.go);
//   - the clusters/*/proxy fan-out across all clusters (fanout.go), whose
//     merged lists are bounded (WithMaxListBytes), and which sends
//     non-resource paths to the host API server as the caller, GET and
//     HEAD only (host.go).
//
// What it does not own: storage, informers, authorization, and how a member
// is reached. Clusters come from functions the caller passes in (typically
// listers with a live GET fallback); the transport of each member (TLS,
// spec.proxyURL, the impersonator token, a Pull member's tunnel) comes from
// the process's member.Cache. The caller has already authorised the request
// for clusters/proxy on the control plane; the member authorises the
// impersonated identity with its own RBAC.
package proxy
