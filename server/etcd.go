package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/server/etcdlayout"
)

// EmbeddedEtcd is etcd running inside flotilla-apiserver: the default
// storage on one machine. It listens on loopback only.
type EmbeddedEtcd struct {
	etcd *embed.Etcd
	// ClientURL is where clients reach it.
	ClientURL string
	// local is the registry's storage over etcd's functions, once built.
	local *localEtcd
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
func (e *EmbeddedEtcd) Close() {
	if e.local != nil {
		e.local.Close()
	}
	e.etcd.Close()
}

// Storage returns the registry's options getter with the storage of every
// resource built over this etcd's functions in process (no gRPC
// connection); inner are the API server's options (after ApplyTo), which
// etcdOpts made: prefix, codec, and which resources have a watch cache.
func (e *EmbeddedEtcd) Storage(inner generic.RESTOptionsGetter, etcdOpts *genericoptions.EtcdOptions) (generic.RESTOptionsGetter, error) {
	sizes, err := genericoptions.ParseWatchCacheSizes(etcdOpts.WatchCacheSizes)
	if err != nil {
		return nil, err
	}
	if e.local == nil {
		e.local = newLocalEtcd(v3client.New(e.etcd.Server))
	}
	return localRESTOptions{inner: inner, etcd: e.local, watchCache: func(gr schema.GroupResource) bool {
		// As the API server's options decide: a size of 0 turns it off.
		size, ok := sizes[gr]
		return etcdOpts.EnableWatchCache && (!ok || size > 0)
	}}, nil
}
