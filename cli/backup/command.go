package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/server/etcdlayout"
)

// The backup and restore commands of flotillactl: their flags, checked,
// and what they print.

// snapshotTimeFormat names a default snapshot file after the time it was taken.
const snapshotTimeFormat = "20060102T150405Z"

// EtcdFlags locate the etcd that holds flotilla-apiserver's objects: its
// embedded etcd's directory, or an external member with the TLS flags
// flotilla-apiserver itself takes.
type EtcdFlags struct {
	EmbeddedDir string
	Servers     []string
	CAFile      string
	CertFile    string
	KeyFile     string
}

func (f *EtcdFlags) validate() error {
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
func (f *EtcdFlags) config() (clientv3.Config, error) {
	if f.EmbeddedDir != "" {
		url, err := EmbeddedClientURL(f.EmbeddedDir)
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

// BackupFlags are the flags of backup.
type BackupFlags struct {
	Etcd EtcdFlags
	// Output is the snapshot file; empty: flotilla-etcd-<UTC time>.db in
	// the current directory.
	Output string
}

// Run saves a verified snapshot and prints where it was written, its
// revision and how to restore it; self is how the user runs this binary.
func (o *BackupFlags) Run(ctx context.Context, self string, w io.Writer) error {
	if err := o.Etcd.validate(); err != nil {
		return err
	}
	cfg, err := o.Etcd.config()
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
	st, err := Save(ctx, zap.NewNop(), cfg, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Snapshot of %s written to %s\n", cfg.Endpoints[0], st.Path)
	fmt.Fprintf(w, "  revision %d, %d keys, %d bytes, sha256 %s\n", st.Revision, st.Keys, st.Size, st.SHA256)
	if o.Etcd.EmbeddedDir != "" {
		fmt.Fprintf(w, "Restore it, flotilla-apiserver stopped and %s moved away, with:\n  %s restore --snapshot=%s --embedded-etcd-dir=%s\n", etcdlayout.DataDir(o.Etcd.EmbeddedDir), self, st.Path, o.Etcd.EmbeddedDir)
	} else {
		fmt.Fprintf(w, "Restore it into each etcd member with %s restore --snapshot=%s --data-dir=... (see docs/backup.md)\n", self, st.Path)
	}
	return nil
}

// RestoreFlags are the flags of restore. Use NewRestoreFlags.
type RestoreFlags struct {
	Snapshot     string
	EmbeddedDir  string
	DataDir      string
	Member       Member
	RevisionBump uint64
}

// NewRestoreFlags returns restore's defaults.
func NewRestoreFlags() *RestoreFlags { return &RestoreFlags{RevisionBump: DefaultRevisionBump} }

func (o *RestoreFlags) validate() error {
	member := o.Member.Name != "" || len(o.Member.PeerURLs) > 0 || o.Member.InitialCluster != "" || o.Member.ClusterToken != ""
	switch {
	case o.Snapshot == "":
		return errors.New("--snapshot is required")
	case o.EmbeddedDir == "" && o.DataDir == "":
		return errors.New("either --embedded-etcd-dir or --data-dir is required")
	case o.EmbeddedDir != "" && o.DataDir != "":
		return errors.New("--embedded-etcd-dir and --data-dir exclude each other")
	case o.EmbeddedDir != "" && member:
		return errors.New("the embedded etcd's member is known: --name, --initial-cluster, --initial-advertise-peer-urls and --initial-cluster-token go with --data-dir only")
	case o.DataDir != "" && (o.Member.Name == "" || len(o.Member.PeerURLs) == 0 || o.Member.InitialCluster == ""):
		return errors.New("--data-dir needs the member it restores: --name, --initial-advertise-peer-urls and --initial-cluster")
	}
	return nil
}

// Run verifies the snapshot, writes the new data directory and prints how
// to start from it.
func (o *RestoreFlags) Run(w io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	lg := zap.NewNop()
	var (
		st   Status
		data = o.DataDir
		err  error
	)
	if o.EmbeddedDir != "" {
		data, st, err = RestoreEmbedded(lg, o.Snapshot, o.EmbeddedDir, o.RevisionBump)
	} else {
		st, err = Restore(lg, RestoreOptions{Snapshot: o.Snapshot, DataDir: o.DataDir, Member: o.Member, RevisionBump: o.RevisionBump})
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Restored %s (revision %d, %d keys) into %s\n", st.Path, st.Revision, st.Keys, data)
	if o.EmbeddedDir != "" {
		fmt.Fprintf(w, "Start flotilla-apiserver with --embedded-etcd-dir=%s\n", o.EmbeddedDir)
	} else {
		fmt.Fprintf(w, "Start etcd member %s with --data-dir=%s once every member is restored\n", o.Member.Name, o.DataDir)
	}
	return nil
}
