package server

import (
	"context"
	"fmt"
	"path"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// quotaLockTTL bounds how long a replica that dies holding a quota lock
// keeps it: its etcd session's lease expires.
const quotaLockTTL = 10

// quotaLocks are the namespaces' FederatedResourceQuota locks every replica
// shares: an etcd mutex per namespace under
// <storage prefix>/locks/federatedresourcequotas/<namespace>, held with a
// session lease of quotaLockTTL seconds.
type quotaLocks struct {
	client *clientv3.Client
	prefix string

	mu      sync.Mutex
	session *concurrency.Session
}

// newQuotaLocks reaches the server's etcd as its storage does.
func newQuotaLocks(cfg storagebackend.Config) (*quotaLocks, error) {
	c := clientv3.Config{Endpoints: cfg.Transport.ServerList, DialTimeout: 20 * time.Second}
	if t := cfg.Transport; t.CertFile != "" || t.KeyFile != "" || t.TrustedCAFile != "" {
		tlsConfig, err := (transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("the quota locks' etcd client: %w", err)
		}
		c.TLS = tlsConfig
	}
	client, err := clientv3.New(c)
	if err != nil {
		return nil, fmt.Errorf("the quota locks' etcd client: %w", err)
	}
	return &quotaLocks{client: client, prefix: path.Join("/", cfg.Prefix, "locks", "federatedresourcequotas")}, nil
}

// Lock is the registry's NamespaceLock: it holds namespace's lock until
// the returned release is called.
func (l *quotaLocks) Lock(ctx context.Context, namespace string) (func(), error) {
	s, err := l.currentSession()
	if err != nil {
		return nil, err
	}
	m := concurrency.NewMutex(s, path.Join(l.prefix, namespace))
	if err := m.Lock(ctx); err != nil {
		return nil, err
	}
	return func() {
		// The write is done; a release that fails leaves the key to the
		// session's lease.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.Unlock(ctx)
	}, nil
}

// currentSession returns the live session, starting a new one when there
// is none or its lease was lost.
func (l *quotaLocks) currentSession() (*concurrency.Session, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session != nil {
		select {
		case <-l.session.Done():
			l.session = nil
		default:
			return l.session, nil
		}
	}
	s, err := concurrency.NewSession(l.client, concurrency.WithTTL(quotaLockTTL))
	if err != nil {
		return nil, fmt.Errorf("an etcd session for the quota locks: %w", err)
	}
	l.session = s
	return s, nil
}

// Close ends the session (its locks go with its lease) and the client.
func (l *quotaLocks) Close() {
	l.mu.Lock()
	if l.session != nil {
		_ = l.session.Close()
	}
	l.mu.Unlock()
	_ = l.client.Close()
}
