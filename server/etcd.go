package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

// EmbeddedEtcd is etcd running inside flotilla-apiserver: the default
// storage on one machine. It listens on loopback only.
type EmbeddedEtcd struct {
	etcd *embed.Etcd
	// ClientURL is where clients reach it.
	ClientURL string
}

// etcdPorts are remembered in the data directory: a single-member etcd keeps
// its peer URL in its data, so a restart must reuse it.
type etcdPorts struct {
	Client int `json:"client"`
	Peer   int `json:"peer"`
}

// StartEmbeddedEtcd starts etcd with its data in dir; noFsync skips fsync
// (test beds only).
func StartEmbeddedEtcd(ctx context.Context, dir string, noFsync bool) (*EmbeddedEtcd, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ports, err := loadOrPickPorts(filepath.Join(dir, "ports.json"))
	if err != nil {
		return nil, err
	}
	client := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports.Client))}
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports.Peer))}
	cfg := embed.NewConfig()
	cfg.Name = "flotilla"
	cfg.Dir = filepath.Join(dir, "data")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	// NewConfig leaves the slow-request threshold at zero (only the flag
	// set defaults it), which logs every request as slow.
	cfg.WarningUnaryRequestDuration = embed.DefaultWarningUnaryRequestDuration
	cfg.QuotaBackendBytes = 8 << 30
	cfg.UnsafeNoFsync = noFsync
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

func loadOrPickPorts(path string) (etcdPorts, error) {
	var p etcdPorts
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &p); err != nil {
			return p, fmt.Errorf("reading %s: %w", path, err)
		}
		return p, nil
	}
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close() // only the port was wanted
		}
	}()
	for _, port := range []*int{&p.Client, &p.Peer} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return p, err
		}
		ls = append(ls, l)
		*port = l.Addr().(*net.TCPAddr).Port
	}
	data, _ := json.Marshal(p)
	return p, os.WriteFile(path, data, 0o600)
}
