package backup

import (
	"errors"
	"fmt"
	"os"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/server/etcdlayout"
)

// DefaultRevisionBump is how far a restore moves etcd's revision past the
// snapshot's, as etcd's guide for restoring a Kubernetes cluster advises:
// clients that watched the old etcd hold resourceVersions up to the last
// one before the disaster, which the snapshot may predate; with the revision
// bumped and the old revisions marked compacted, they relist instead of
// missing changes or seeing a resourceVersion reused.
const DefaultRevisionBump = 1_000_000_000

// Member is the etcd member a snapshot is restored as (etcdutl snapshot
// restore's --name, --initial-advertise-peer-urls, --initial-cluster and
// --initial-cluster-token).
type Member struct {
	Name           string
	PeerURLs       []string
	InitialCluster string
	// ClusterToken defaults to etcd's default, which the embedded etcd uses.
	ClusterToken string
}

// RestoreOptions say what to restore where.
type RestoreOptions struct {
	// Snapshot is the file Save wrote.
	Snapshot string
	// DataDir is the new member's data directory; it must not exist or be empty.
	DataDir string
	Member  Member
	// RevisionBump, when not zero, moves the revision that far past the
	// snapshot's and marks every older revision compacted.
	RevisionBump uint64
}

// Restore verifies the snapshot and writes a new etcd data directory from
// it, from which one member of a new cluster starts. Restore each member of
// a cluster from the same snapshot with its own Member.
func Restore(lg *zap.Logger, o RestoreOptions) (Status, error) {
	st, err := Verify(lg, o.Snapshot)
	if err != nil {
		return st, err
	}
	return st, restoreVerified(lg, o)
}

// restoreVerified is Restore once the snapshot is verified.
func restoreVerified(lg *zap.Logger, o RestoreOptions) error {
	token := o.Member.ClusterToken
	if token == "" {
		token = embed.NewConfig().InitialClusterToken
	}
	if err := snapshot.NewV3(lg).Restore(snapshot.RestoreConfig{
		SnapshotPath:        o.Snapshot,
		Name:                o.Member.Name,
		OutputDataDir:       o.DataDir,
		PeerURLs:            o.Member.PeerURLs,
		InitialCluster:      o.Member.InitialCluster,
		InitialClusterToken: token,
		RevisionBump:        o.RevisionBump,
		MarkCompacted:       o.RevisionBump > 0,
	}); err != nil {
		return fmt.Errorf("restoring %s into %s: %w", o.Snapshot, o.DataDir, err)
	}
	return nil
}

// RestoreEmbedded restores the snapshot into dir, an --embedded-etcd-dir
// flotilla-apiserver then starts from. dir may be absent, or hold the
// ports an earlier embedded etcd recorded (they are kept), but no etcd data.
// It returns the data directory written.
func RestoreEmbedded(lg *zap.Logger, snapshotPath, dir string, revisionBump uint64) (string, Status, error) {
	data := etcdlayout.DataDir(dir)
	if entries, err := os.ReadDir(data); err == nil && len(entries) > 0 {
		return data, Status{}, fmt.Errorf("%s already holds etcd data: stop flotilla-apiserver and move it away first", data)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return data, Status{}, err
	}
	// Verified before anything is written under dir.
	st, err := Verify(lg, snapshotPath)
	if err != nil {
		return data, st, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return data, st, err
	}
	ports, err := etcdlayout.LoadOrPickPorts(dir)
	if err != nil {
		return data, st, err
	}
	peer := ports.PeerURL()
	err = restoreVerified(lg, RestoreOptions{
		Snapshot: snapshotPath,
		DataDir:  data,
		Member: Member{
			Name:           etcdlayout.MemberName,
			PeerURLs:       []string{peer.String()},
			InitialCluster: etcdlayout.MemberName + "=" + peer.String(),
		},
		RevisionBump: revisionBump,
	})
	return data, st, err
}

// EmbeddedClientURL is the client URL of the embedded etcd that runs with
// its data in dir (while flotilla-apiserver runs).
func EmbeddedClientURL(dir string) (string, error) {
	ports, err := etcdlayout.LoadPorts(dir)
	if err != nil {
		return "", fmt.Errorf("%s is not an embedded etcd dir flotilla-apiserver has run with: %w", dir, err)
	}
	u := ports.ClientURL()
	return u.String(), nil
}
