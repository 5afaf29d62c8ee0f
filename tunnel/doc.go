// Package tunnel carries the control plane's requests to a pull member's API
// server over the one connection its flotilla-agent keeps open, so the
// control plane never needs a route to the member.
//
// How it works:
//   - The agent (RunAgent) sends POST
//     /apis/cluster.karmada.io/v1alpha1/clusters/{cluster}/tunnel with
//     "Connection: Upgrade" and "Upgrade: flotilla-tunnel" to the host API
//     server, which proxies it to flotilla-apiserver like any upgrade request
//     of an aggregated API (exec, attach, port-forward). flotilla-apiserver
//     answers 101 Switching Protocols and keeps the connection.
//   - Over that connection both sides run yamux. The control plane is the
//     yamux client, which opens streams, although the agent dialed; the agent
//     accepts them.
//   - Each stream carries one plain HTTP/1.1 connection from flotilla-apiserver
//     to the agent, which serves it with a reverse proxy to its member's API
//     server, using its own member credentials (rest.TransportFor). Watches
//     and logs -f are flushed as they come; 101 upgrades (exec, attach,
//     port-forward) are spliced. The agent listens on no port: it only serves
//     the streams of its tunnel.
//
// Through the host: kube-apiserver does not know clusters/tunnel is long
// running (only watch and the proxy, exec, attach, log and portforward
// subresources are), so its request timeout (--request-timeout, 60s) fires
// on every tunnel. The connection is already taken over by then and lives
// on; the host logs one "Timeout or abort while handling" line for it. The
// aggregator releases the request's priority-and-fairness seat when it
// proxies, so tunnels hold no seat there. flotilla-apiserver itself counts
// clusters/tunnel as long running (registry.Config).
//
// Who may open a tunnel: flotilla-apiserver authorizes the request like any
// other (a SubjectAccessReview on the host: verb create on clusters/tunnel,
// name <cluster>), and then Authorize requires the requester's user name to
// be exactly system:karmada:agent:<cluster>, the identity registration gives
// the cluster's agent. Nobody else can hold a cluster's tunnel, whatever their
// RBAC.
//
// What requests on a tunnel run as: the agent sends them to its member with
// its own member identity, keeping the Impersonate-* headers the control
// plane set and dropping any Authorization header. So:
//   - clusters/{name}/proxy sets the requester's Impersonate-User, -Group,
//     -Uid and -Extra-* headers, and the member's RBAC decides on the
//     impersonated user; the agent's member identity needs the impersonate
//     verb on users, groups, serviceaccounts, uids and userextras;
//   - search, the metrics adapter and their member access reviews send no
//     impersonation, so over the tunnel they run as the agent's member
//     identity, which therefore needs to read what they cache (and create
//     SubjectAccessReviews when search or the metrics adapter check access
//     in the member).
//
// The control plane must therefore only send impersonated requests over a
// tunnel on behalf of users; a request without Impersonate-* headers has the
// agent's rights in the member.
//
// Several replicas: an agent's tunnel reaches one replica (the host's
// aggregator picks it). That replica records itself as the holder in the
// host Lease karmada-system/flotilla-tunnel-<cluster> (LeaseDirectory;
// holderIdentity is its --tunnel-relay-address) and deletes it when the
// agent leaves. Another replica asked for the cluster opens each
// connection through the holder: a POST on the holder's own
// clusters/{name}/tunnel with "Upgrade: flotilla-tunnel-relay", with the
// replica's host credentials, verifying the holder's serving certificate
// against the shared serving CA. The holder accepts only the replicas'
// own identity (the name the host gives their credentials, learned with a
// SelfSubjectReview), opens a stream of its tunnel and splices the two: one
// hop, never further. The relayed connection then carries the same
// requests, impersonation included, as a local stream. When the holder
// dies, its agent's connection breaks, the agent reconnects through the
// aggregator to a live replica, and that one claims the Lease.
//
// What an agent may cost the control plane: the control plane opens every
// stream; an agent that opens one, or pings faster than once a second on
// average, loses its tunnel before yamux acts on the frame (guardedConn),
// because yamux would hold 256 KiB per stream it opens and a goroutine per
// ping. What is left is the unread part of the control plane's own
// streams, at most maxStreamWindow (1 MiB) each.
//
// What it owns: the tunnel's wire protocol, the control plane's sessions
// (Server, and Connecter, the rest.Connecter of clusters/tunnel), and the
// agent's side (RunAgent). What it does not own: the agent's registration,
// its credentials and RBAC, and deciding which clusters go through a tunnel
// (member and proxy do that for Pull clusters).
package tunnel
