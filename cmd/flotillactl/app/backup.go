package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/backup"
)

func newBackupCommand(self string) *cobra.Command {
	o := &backup.BackupFlags{}
	cmd := &cobra.Command{
		Use:   "backup (--embedded-etcd-dir=DIR | --etcd-servers=URL [--etcd-cafile=F --etcd-certfile=F --etcd-keyfile=F]) [-o FILE]",
		Short: "Save an etcd snapshot of the control plane's objects (clusters, policies, bindings, Works ...)",
		Long: `Save a snapshot of the etcd that holds flotilla-apiserver's objects (every
karmada.io object: Clusters, policies, bindings, Works ...), as etcdctl snapshot
save does, verify it and print where it was written and its revision.

The snapshot is taken while flotilla-apiserver runs. It does not hold the
resource templates (Deployments, ConfigMaps, CRs ...), namespaces or Secrets:
those live in the host API server's etcd, which is backed up on its own.
See docs/backup.md.`,
		Example: fmt.Sprintf(`  # flotilla-apiserver with its embedded etcd
  %[1]s backup --embedded-etcd-dir=/var/lib/flotilla/etcd -o flotilla.db

  # an external etcd (one member)
  %[1]s backup --etcd-servers=https://etcd-0:2379 --etcd-cafile=ca.crt \
    --etcd-certfile=client.crt --etcd-keyfile=client.key -o flotilla.db`, self),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), self, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Etcd.EmbeddedDir, "embedded-etcd-dir", o.Etcd.EmbeddedDir, "flotilla-apiserver's --embedded-etcd-dir (its embedded etcd's client URL is recorded there)")
	fs.StringSliceVar(&o.Etcd.Servers, "etcd-servers", o.Etcd.Servers, "the client URL of one member of an external etcd (flotilla-apiserver's --etcd-servers)")
	fs.StringVar(&o.Etcd.CAFile, "etcd-cafile", o.Etcd.CAFile, "CA bundle that verifies the external etcd's serving certificate")
	fs.StringVar(&o.Etcd.CertFile, "etcd-certfile", o.Etcd.CertFile, "client certificate for the external etcd")
	fs.StringVar(&o.Etcd.KeyFile, "etcd-keyfile", o.Etcd.KeyFile, "key of --etcd-certfile")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "snapshot file to write (default flotilla-etcd-<UTC time>.db in the current directory); written whole or not at all")
	return cmd
}
