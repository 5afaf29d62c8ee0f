package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/backup"
	"github.com/flotilla-io/flotilla/server/etcdlayout"
)

// snapshotTimeFormat names a default snapshot file after the time it was taken.
const snapshotTimeFormat = "20060102T150405Z"

// etcdFlags locate the etcd that holds flotilla-apiserver's objects: its
// embedded etcd's directory, or an external member with the TLS flags
// flotilla-apiserver itself takes.
type etcdFlags struct {
	EmbeddedDir string
	Servers     []string
	CAFile      string
	CertFile    string
	KeyFile     string
}

func (f *etcdFlags) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.EmbeddedDir, "embedded-etcd-dir", f.EmbeddedDir, "flotilla-apiserver's --embedded-etcd-dir (its embedded etcd's client URL is recorded there)")
	fs.StringSliceVar(&f.Servers, "etcd-servers", f.Servers, "the client URL of one member of an external etcd (flotilla-apiserver's --etcd-servers)")
	fs.StringVar(&f.CAFile, "etcd-cafile", f.CAFile, "CA bundle that verifies the external etcd's serving certificate")
	fs.StringVar(&f.CertFile, "etcd-certfile", f.CertFile, "client certificate for the external etcd")
	fs.StringVar(&f.KeyFile, "etcd-keyfile", f.KeyFile, "key of --etcd-certfile")
}

func (f *etcdFlags) validate() error {
	switch {
	case f.EmbeddedDir == "" && len(f.Servers) == 0:
		return errors.New("either --embedded-etcd-dir or --etcd-servers is required")
	case f.EmbeddedDir != "" && len(f.Servers) > 0:
		return errors.New("--embedded-etcd-dir and --etcd-servers exclude each other")
	case len(f.Servers) > 1:
		return fmt.Errorf("a snapshot is taken from one etcd member: give --etcd-servers one URL, not %d", len(f.Servers))
	case f.EmbeddedDir != "" && (f.CAFile != "" || f.CertFile != "" || f.KeyFile != ""):
		return errors.New("the embedded etcd serves plain HTTP on loopback: the --etcd-*file flags apply to --etcd-servers only")
	case (f.CertFile == "") != (f.KeyFile == ""):
		return errors.New("--etcd-certfile and --etcd-keyfile go together")
	}
	return nil
}

// config is the etcd client configuration of the flags.
func (f *etcdFlags) config() (clientv3.Config, error) {
	if f.EmbeddedDir != "" {
		url, err := backup.EmbeddedClientURL(f.EmbeddedDir)
		return clientv3.Config{Endpoints: []string{url}}, err
	}
	cfg := clientv3.Config{Endpoints: f.Servers}
	if f.CAFile != "" || f.CertFile != "" || strings.HasPrefix(f.Servers[0], "https://") {
		tlsInfo := transport.TLSInfo{TrustedCAFile: f.CAFile, CertFile: f.CertFile, KeyFile: f.KeyFile}
		tls, err := tlsInfo.ClientConfig()
		if err != nil {
			return cfg, fmt.Errorf("loading the etcd TLS files: %w", err)
		}
		cfg.TLS = tls
	}
	return cfg, nil
}

// backupOptions holds the flags of backup.
type backupOptions struct {
	etcd   etcdFlags
	Output string
}

func newBackupCommand(self string) *cobra.Command {
	o := &backupOptions{}
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
			if err := o.etcd.validate(); err != nil {
				return err
			}
			cfg, err := o.etcd.config()
			if err != nil {
				return err
			}
			out := o.Output
			if out == "" {
				out = "flotilla-etcd-" + time.Now().UTC().Format(snapshotTimeFormat) + ".db"
			}
			if out, err = filepath.Abs(out); err != nil {
				return err
			}
			st, err := backup.Save(cmd.Context(), zap.NewNop(), cfg, out)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Snapshot of %s written to %s\n", cfg.Endpoints[0], st.Path)
			fmt.Fprintf(w, "  revision %d, %d keys, %d bytes, sha256 %s\n", st.Revision, st.Keys, st.Size, st.SHA256)
			if o.etcd.EmbeddedDir != "" {
				fmt.Fprintf(w, "Restore it, flotilla-apiserver stopped and %s moved away, with:\n  %s restore --snapshot=%s --embedded-etcd-dir=%s\n", etcdlayout.DataDir(o.etcd.EmbeddedDir), self, st.Path, o.etcd.EmbeddedDir)
			} else {
				fmt.Fprintf(w, "Restore it into each etcd member with %s restore --snapshot=%s --data-dir=... (see docs/backup.md)\n", self, st.Path)
			}
			return nil
		},
	}
	o.etcd.addFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "snapshot file to write (default flotilla-etcd-<UTC time>.db in the current directory); written whole or not at all")
	return cmd
}
