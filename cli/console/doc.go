// Package console is flotillactl's web console: a small web server on
// this machine whose pages show the fleet (clusters and their health,
// workloads and where they run, search across members, events) as one
// user sees it.
//
// Security model: every read is made with the credentials of the
// kubeconfig flotillactl was given, through the control plane (members
// through clusters/{name}/proxy and search, whose access checks apply), so
// a page holds exactly what that user may read; the console stores
// nothing and makes no credential. It listens on loopback by default:
// anyone who can reach its port acts as its user. Its pages are
// html/template (escaped), load nothing from elsewhere and may not be
// framed (Content-Security-Policy 'self', frame-ancestors 'none'). Reads
// of a member are bounded (memberTimeout), so a member that is down shows
// as unreachable instead of holding a page.
//
// Live updates are server-sent events: the page keeps one stream per
// watched list, fed by one watch the server holds as the user, and swaps
// in the rows it receives; nothing is listed again.
package console
