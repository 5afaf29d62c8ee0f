package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/server/etcdlayout"
)

// EmbeddedEtcd is etcd running inside flotilla-apiserver: the default
// storage on one machine. It listens on loopback only.
type EmbeddedEtcd struct {
	etcd *embed.Etcd
	// ClientURL is where clients reach it.
	ClientURL string
}

// The embedded etcd is one member: no follower ever catches up from its
// raft log, which etcd keeps in memory (every request of the last
// snapshot count plus the catch-up entries: with etcd's defaults, 10,000
// and 5,000, about 30 MiB of the heap after the propagation benchmark's
// burst of Work writes). A snapshot every 2,000 writes keeping 500 holds
// a sixth of that; each snapshot is a small file (the v3 data is in the
// backend, not in the snapshot).
const (
	embeddedSnapshotCount  = 2000
	embeddedCatchUpEntries = 500
)

// StartEmbeddedEtcd starts etcd with its data in dir; noFsync skips fsync
// (test beds only).
func StartEmbeddedEtcd(ctx context.Context, dir string, noFsync bool) (*EmbeddedEtcd, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ports, err := etcdlayout.LoadOrPickPorts(dir)
	if err != nil {
		return nil, err
	}
	client, peer := ports.ClientURL(), ports.PeerURL()
	cfg := embed.NewConfig()
	cfg.Name = etcdlayout.MemberName
	cfg.Dir = etcdlayout.DataDir(dir)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	// NewConfig leaves the slow-request threshold at zero (only the flag
	// set defaults it), which logs every request as slow.
	cfg.WarningUnaryRequestDuration = embed.DefaultWarningUnaryRequestDuration
	cfg.QuotaBackendBytes = 8 << 30
	cfg.UnsafeNoFsync = noFsync
	cfg.SnapshotCount, cfg.SnapshotCatchUpEntries = embeddedSnapshotCount, embeddedCatchUpEntries
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w", err)
	case <-time.After(time.Minute):
		e.Close()
		return nil, errors.New("embedded etcd was not ready after a minute")
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	klog.FromContext(ctx).Info("Embedded etcd is ready", "dir", dir, "url", client.String())
	return &EmbeddedEtcd{etcd: e, ClientURL: client.String()}, nil
}

// Close stops etcd.
func (e *EmbeddedEtcd) Close() { e.etcd.Close() }
