package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/backup"
)

func newRestoreCommand(self string) *cobra.Command {
	o := backup.NewRestoreFlags()
	cmd := &cobra.Command{
		Use:   "restore --snapshot=FILE (--embedded-etcd-dir=DIR | --data-dir=DIR --name=NAME --initial-advertise-peer-urls=URL --initial-cluster=NAME=URL,...)",
		Short: "Write a new etcd data directory from a snapshot taken with backup",
		Long: `Verify a snapshot taken with backup and write a new etcd data directory from
it, as etcdutl snapshot restore does; flotilla-apiserver (or an etcd member) then
starts from it. flotilla-apiserver must be stopped, and the old data moved away:
restore never overwrites etcd data.

With --embedded-etcd-dir the data goes where flotilla-apiserver's embedded etcd
starts from, with the member name and ports it expects. With --data-dir it is
one member of an external etcd cluster: restore every member from the same
snapshot with its own --name and peer URL and the same --initial-cluster.

The revision is moved --bump-revision past the snapshot's and older revisions
are marked compacted, so that clients watching from before the restore list
again instead of missing changes. See docs/backup.md.`,
		Example: fmt.Sprintf(`  # flotilla-apiserver with its embedded etcd (stopped, old data moved away)
  %[1]s restore --snapshot=flotilla.db --embedded-etcd-dir=/var/lib/flotilla/etcd

  # member etcd-0 of a three-member external etcd
  %[1]s restore --snapshot=flotilla.db --data-dir=/var/lib/etcd --name=etcd-0 \
    --initial-advertise-peer-urls=https://etcd-0:2380 \
    --initial-cluster=etcd-0=https://etcd-0:2380,etcd-1=https://etcd-1:2380,etcd-2=https://etcd-2:2380`, self),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Snapshot, "snapshot", o.Snapshot, "snapshot file written by backup")
	fs.StringVar(&o.EmbeddedDir, "embedded-etcd-dir", o.EmbeddedDir, "flotilla-apiserver's --embedded-etcd-dir to restore into (its ports are kept if recorded; it must hold no etcd data)")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "data directory of an external etcd member to create (must not exist or be empty)")
	fs.StringVar(&o.Member.Name, "name", o.Member.Name, "with --data-dir: the member's name (etcd --name)")
	fs.StringSliceVar(&o.Member.PeerURLs, "initial-advertise-peer-urls", o.Member.PeerURLs, "with --data-dir: the member's peer URLs")
	fs.StringVar(&o.Member.InitialCluster, "initial-cluster", o.Member.InitialCluster, "with --data-dir: every member as NAME=PEER-URL, comma-separated")
	fs.StringVar(&o.Member.ClusterToken, "initial-cluster-token", o.Member.ClusterToken, "with --data-dir: the new cluster's token (default etcd's, etcd-cluster)")
	fs.Uint64Var(&o.RevisionBump, "bump-revision", o.RevisionBump, "move the revision this far past the snapshot's and mark older revisions compacted; 0 keeps the snapshot's revision")
	return cmd
}
