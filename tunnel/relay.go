package tunnel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// RelayProtocol is the Upgrade token of a relay: a replica of the control
// plane without the tunnel of a cluster asks the replica holding it for one
// connection to the agent. The relay answers 101 and splices the upgraded
// connection to a new stream of its tunnel; it never relays further, so a
// relay is one hop.
const RelayProtocol = "flotilla-tunnel-relay"

// Directory tells which replica holds each cluster's tunnel: replicas
// Claim a cluster when its agent connects to them and Release it when the
// agent leaves; Holder returns the address of the replica that last
// claimed it ("" when none).
type Directory interface {
	Claim(ctx context.Context, cluster string) error
	Release(ctx context.Context, cluster string) error
	Holder(ctx context.Context, cluster string) (string, error)
}

// Relay lets several replicas serve every Pull cluster: requests for a
// cluster whose agent is connected to another replica are sent over a
// relayed connection through that replica.
type Relay struct {
	// Self is the address (host:port) where the other replicas reach this
	// one; the Directory records it.
	Self string
	// Identity is the user the replicas authenticate as to each other (the
	// host's name for this server's credentials); only it may relay.
	Identity string
	// Directory records and finds tunnel holders.
	Directory Directory
	// Peer is the configuration reaching another replica: this server's
	// host credentials, its serving CA and the serving certificate's name.
	// Its Host is replaced by each holder's address.
	Peer *rest.Config
}

// SetRelay makes s announce its tunnels in r.Directory and open streams to
// clusters whose agents are connected elsewhere through their replica.
// Call it before the server serves.
func (s *Server) SetRelay(r *Relay) error {
	if r.Self == "" || r.Identity == "" || r.Directory == nil || r.Peer == nil {
		return errors.New("a tunnel relay needs its address, identity, directory and peer configuration")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.relay = r
	s.peers = map[string]*peer{}
	return nil
}

// isRelayRequest says whether r asks to upgrade to the relay protocol.
func isRelayRequest(r *http.Request) bool { return isUpgradeTo(r, RelayProtocol) }

// currentRelay returns the relay, nil before SetRelay.
func (s *Server) currentRelay() *Relay {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.relay
}

// authorizeRelay allows a relay only to the replicas' own identity, on
// top of RBAC: a relayed connection reaches the member with the agent's
// rights, unimpersonated.
func (s *Server) authorizeRelay(u user.Info, cluster string) error {
	r := s.currentRelay()
	gr := schema.GroupResource{Group: "cluster.karmada.io", Resource: "clusters/" + Subresource}
	if r == nil {
		return apierrors.NewForbidden(gr, cluster, errors.New("this replica relays no tunnel (no --tunnel-relay-address)"))
	}
	if u == nil || u.GetName() != r.Identity {
		name := "<none>"
		if u != nil {
			name = u.GetName()
		}
		return apierrors.NewForbidden(gr, cluster, fmt.Errorf("only the control plane's replicas (user %s) may relay a tunnel, not %q", r.Identity, name))
	}
	return nil
}

// serveRelay opens a stream of the local tunnel of cluster, upgrades the
// request and splices the two until either side closes. Without a local
// tunnel it answers 503 before upgrading.
func (s *Server) serveRelay(w http.ResponseWriter, r *http.Request, cluster string, fail func(error)) {
	stream, err := s.openLocal(r.Context(), cluster)
	if err != nil {
		var nc *NotConnectedError
		if errors.As(err, &nc) {
			fail(apierrors.NewServiceUnavailable(nc.Error() + " to this replica"))
			return
		}
		fail(apierrors.NewInternalError(err))
		return
	}
	c, err := switchProtocols(w, RelayProtocol)
	if err != nil {
		_ = stream.Close()
		var late errWritingUpgrade
		if !errors.As(err, &late) {
			fail(apierrors.NewInternalError(err))
		}
		return
	}
	splice(c, stream)
}

// splice copies both ways until one side ends, then closes both.
func splice(a, b net.Conn) {
	var once sync.Once
	closeBoth := func() {
		_ = a.Close()
		_ = b.Close()
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(a, b); once.Do(closeBoth); done <- struct{}{} }()
	go func() { _, _ = io.Copy(b, a); once.Do(closeBoth); done <- struct{}{} }()
	<-done
	<-done
}

// peer is the client of one other replica.
type peer struct {
	cfg    *rest.Config
	client *http.Client
}

// openRelayed opens a connection to the agent of cluster through the
// replica the directory names, when that is not this one.
func (s *Server) openRelayed(ctx context.Context, r *Relay, cluster string) (net.Conn, error) {
	holder, err := r.Directory.Holder(ctx, cluster)
	if err != nil {
		return nil, fmt.Errorf("finding the replica holding the tunnel of cluster %q: %w", cluster, err)
	}
	if holder == "" || holder == r.Self {
		return nil, &NotConnectedError{Cluster: cluster}
	}
	p, err := s.peer(r, holder)
	if err != nil {
		return nil, err
	}
	url, err := tunnelURL(p.cfg, cluster)
	if err != nil {
		return nil, err
	}
	rwc, err := upgrade(ctx, p.client, url, RelayProtocol)
	if err != nil {
		return nil, fmt.Errorf("relaying to the tunnel of cluster %q through replica %s: %w", cluster, holder, err)
	}
	return &relayedConn{ReadWriteCloser: rwc, remote: holder}, nil
}

// peer returns the client of the replica at addr, built once.
func (s *Server) peer(r *Relay, addr string) (*peer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.peers[addr]; ok {
		return p, nil
	}
	cfg := rest.CopyConfig(r.Peer)
	cfg.Host = "https://" + addr
	client, err := upgradeClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("the client of replica %s: %w", addr, err)
	}
	p := &peer{cfg: cfg, client: client}
	s.peers[addr] = p
	return p, nil
}

// relayedConn is a relayed connection: the upgraded response body of the
// relay request. Deadlines are not supported (http.Transport sets none).
type relayedConn struct {
	io.ReadWriteCloser
	remote string
}

func (c *relayedConn) LocalAddr() net.Addr              { return relayAddr("local") }
func (c *relayedConn) RemoteAddr() net.Addr             { return relayAddr(c.remote) }
func (c *relayedConn) SetDeadline(time.Time) error      { return nil }
func (c *relayedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *relayedConn) SetWriteDeadline(time.Time) error { return nil }

type relayAddr string

func (a relayAddr) Network() string { return "relay" }
func (a relayAddr) String() string  { return string(a) }

// announce records in the directory that this replica holds (or no longer
// holds) cluster's tunnel, in the background, retrying until it succeeds
// or a later announcement for the cluster supersedes it.
func (s *Server) announce(cluster string, holds bool) {
	s.mu.Lock()
	r := s.relay
	if r == nil {
		s.mu.Unlock()
		return
	}
	s.announcing[cluster]++
	gen := s.announcing[cluster]
	s.mu.Unlock()
	go func() {
		ctx := context.Background()
		for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
			s.mu.RLock()
			stale := s.announcing[cluster] != gen || s.closed && holds
			s.mu.RUnlock()
			if stale {
				return
			}
			var err error
			if holds {
				err = r.Directory.Claim(ctx, cluster)
			} else {
				err = r.Directory.Release(ctx, cluster)
			}
			if err == nil {
				return
			}
			klog.ErrorS(err, "Recording the tunnel's replica failed; retrying", "cluster", cluster, "holds", holds)
			time.Sleep(delay)
		}
	}()
}
