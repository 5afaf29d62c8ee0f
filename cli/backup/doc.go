// Package backup is flotillactl backup and restore: it takes, verifies and
// restores snapshots of the etcd that holds flotilla-apiserver's objects
// (every karmada.io object: clusters, policies, bindings, Works ...). It
// wraps the maintained etcd libraries, the ones etcdctl and etcdutl are
// built on: go.etcd.io/etcd/client/v3's snapshot save and
// go.etcd.io/etcd/etcdutl/v3's snapshot status and restore. It knows the
// embedded etcd's layout (server/etcdlayout) so that a snapshot can be
// taken from, and restored into, an --embedded-etcd-dir. The commands'
// flags, checked, and what they print are command.go's.
//
// It does not cover the host API server's etcd, where the resource
// templates live, nor member clusters; it starts no etcd and no server.
package backup
