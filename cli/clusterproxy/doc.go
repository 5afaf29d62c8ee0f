// Package clusterproxy reaches member clusters from a command line tool the
// way karmadactl does: through the control plane's clusters/{name}/proxy,
// as the user the control plane knows (the member's RBAC applies to the
// impersonated caller), so a user needs no member credentials. Getter
// gives kubectl's command packages (get, describe, logs, exec, top, ...)
// a member to run against.
package clusterproxy
