package tunnel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/names"
)

// maxSessions bounds the tunnels kept per cluster. Two let two agent replicas
// (or an agent and its own stale connection, until keep-alives notice it)
// stay connected without pushing each other out; a third closes the oldest.
const maxSessions = 2

// DialFunc opens a connection; the network and address are ignored by the
// dialers of a tunnel.
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// Server holds the tunnels of the pull clusters' agents on the control plane
// and opens streams to them. Use NewServer; the zero value is not usable.
type Server struct {
	config *yamux.Config

	mu sync.RWMutex
	// sessions of each cluster, oldest first; the newest serves new streams.
	sessions map[string][]*session
	closed   bool
	// relay, when set, reaches the clusters whose agents are connected to
	// another replica (SetRelay); peers are the clients of those replicas.
	relay *Relay
	peers map[string]*peer
	// announcing counts the directory announcements of each cluster, so
	// that a retried one stops when a newer one starts.
	announcing map[string]uint64
}

// session is one agent connection.
type session struct {
	mux    *yamux.Session
	remote string
	since  time.Time
}

// NewServer returns a Server with no tunnel.
func NewServer() *Server {
	return &Server{config: yamuxConfig(), sessions: map[string][]*session{}, announcing: map[string]uint64{}}
}

// NotConnectedError is returned when a cluster's agent has no tunnel open.
type NotConnectedError struct{ Cluster string }

func (e *NotConnectedError) Error() string {
	return fmt.Sprintf("the agent of cluster %q is not connected", e.Cluster)
}

// Authorize allows the tunnel of cluster to user u only: its name must be
// exactly system:karmada:agent:<cluster>. This holds on top of RBAC (verb
// create on clusters/tunnel), so that no other identity can receive the
// control plane's requests to the member, whatever its rights.
func Authorize(u user.Info, cluster string) error {
	if u == nil {
		return apierrors.NewUnauthorized("no user in the tunnel request")
	}
	if u.GetName() != names.AgentUserPrefix+cluster {
		return apierrors.NewForbidden(schema.GroupResource{Group: "cluster.karmada.io", Resource: "clusters/" + Subresource}, cluster,
			fmt.Errorf("only the agent of cluster %q (user %s%s) may open its tunnel, not %q", cluster, names.AgentUserPrefix, cluster, u.GetName()))
	}
	return nil
}

// Handler returns the handler accepting the tunnel of cluster's agent: the
// request must be an HTTP/1.1 upgrade to Protocol by the user Authorize
// allows (from the request context, as an API server's authentication put
// it there). It serves until the tunnel closes. Connecter serves the same
// behind the clusters/tunnel subresource; this is for servers without it.
func (s *Server) Handler(cluster string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := request.UserFrom(r.Context())
		fail := func(err error) { writeError(w, err) }
		if isRelayRequest(r) {
			if err := s.authorizeRelay(u, cluster); err != nil {
				fail(err)
				return
			}
			s.serveRelay(w, r, cluster, fail)
			return
		}
		if err := Authorize(u, cluster); err != nil {
			fail(err)
			return
		}
		s.accept(w, r, cluster, fail)
	})
}

// accept upgrades the request of an authorized agent and serves the tunnel
// until it closes. fail reports errors that happen before the upgrade.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, cluster string, fail func(error)) {
	logger := klog.FromContext(r.Context()).WithValues("cluster", cluster, "remote", r.RemoteAddr)
	if !isTunnelRequest(r) {
		fail(apierrors.NewBadRequest(fmt.Sprintf("a tunnel is opened with an HTTP/1.1 upgrade to %q", Protocol)))
		return
	}
	if s.isClosed() {
		fail(apierrors.NewServiceUnavailable("the server is shutting down"))
		return
	}
	c, err := switchProtocols(w, Protocol)
	if err != nil {
		var late errWritingUpgrade
		if errors.As(err, &late) {
			logger.Error(err, "Writing the tunnel's upgrade response")
		} else {
			fail(apierrors.NewInternalError(err))
		}
		return
	}
	guarded := guard(c)
	mux, err := yamux.Client(guarded, s.config)
	if err != nil {
		_ = c.Close()
		logger.Error(err, "Starting the tunnel session")
		return
	}
	sess := &session{mux: mux, remote: r.RemoteAddr, since: time.Now()}
	if !s.add(cluster, sess) {
		_ = mux.Close()
		return
	}
	logger.Info("Agent tunnel connected")
	<-mux.CloseChan()
	s.remove(cluster, sess)
	if err := guarded.broken(); err != nil {
		logger.Info("Agent tunnel closed: the agent broke the tunnel's rules", "reason", err.Error())
	}
	logger.Info("Agent tunnel disconnected", "duration", time.Since(sess.since).Round(time.Second))
}

// add makes sess the newest session of cluster, closing the oldest ones
// beyond maxSessions, and announces that this replica holds the tunnel. It
// fails when the server is closed.
func (s *Server) add(cluster string, sess *session) bool {
	if !s.addLocked(cluster, sess) {
		return false
	}
	s.announce(cluster, true)
	return true
}

func (s *Server) addLocked(cluster string, sess *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	list := append(s.sessions[cluster], sess)
	for len(list) > maxSessions {
		// Its accept removes it once closed.
		_ = list[0].mux.Close()
		list = list[1:]
	}
	s.sessions[cluster] = list
	return true
}

// remove forgets sess and, when it was the cluster's last session here,
// announces that this replica no longer holds the tunnel.
func (s *Server) remove(cluster string, sess *session) {
	if s.removeLocked(cluster, sess) {
		s.announce(cluster, false)
	}
}

func (s *Server) removeLocked(cluster string, sess *session) (last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.sessions[cluster]
	out := list[:0:0]
	for _, x := range list {
		if x != sess {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		delete(s.sessions, cluster)
		return true
	}
	s.sessions[cluster] = out
	return false
}

// live returns the open sessions of cluster, newest first.
func (s *Server) live(cluster string) []*session {
	s.mu.RLock()
	defer s.mu.RUnlock()
	list := s.sessions[cluster]
	out := make([]*session, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		if !list[i].mux.IsClosed() {
			out = append(out, list[i])
		}
	}
	return out
}

// Connected says whether the agent of cluster has a tunnel open.
func (s *Server) Connected(cluster string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, ss := range s.sessions[cluster] {
		if !ss.mux.IsClosed() {
			return true
		}
	}
	return false
}

// DialContext returns a dialer of connections to the agent of cluster, each a
// new stream of its newest tunnel, and whether the agent is connected now.
// The dialer looks the tunnel up at every dial, so it keeps working when the
// agent reconnects, and fails with a *NotConnectedError while it is not.
// With a relay (SetRelay), an agent connected to another replica counts as
// connected, and the dialer goes through that replica.
// Each connection carries plain HTTP/1.1 (no TLS) to the agent, which
// forwards it to its member: use it as the Dial of a rest.Config or the
// DialContext of an http.Transport, with any http:// host.
func (s *Server) DialContext(cluster string) (DialFunc, bool) {
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return s.open(ctx, cluster)
	}
	if s.Connected(cluster) {
		return dial, true
	}
	r := s.currentRelay()
	if r == nil {
		return dial, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectionWriteTimeout)
	defer cancel()
	holder, err := r.Directory.Holder(ctx, cluster)
	return dial, err == nil && holder != "" && holder != r.Self
}

// open opens a stream on this replica's tunnel of cluster or, without one,
// through the replica holding it.
func (s *Server) open(ctx context.Context, cluster string) (net.Conn, error) {
	conn, err := s.openLocal(ctx, cluster)
	var nc *NotConnectedError
	if !errors.As(err, &nc) {
		return conn, err
	}
	r := s.currentRelay()
	if r == nil {
		return nil, err
	}
	return s.openRelayed(ctx, r, cluster)
}

// openLocal opens a stream on the newest open tunnel of cluster, falling
// back to older ones if it closes meanwhile.
func (s *Server) openLocal(ctx context.Context, cluster string) (net.Conn, error) {
	sessions := s.live(cluster)
	if len(sessions) == 0 {
		return nil, &NotConnectedError{Cluster: cluster}
	}
	var errs []error
	for _, sess := range sessions {
		conn, err := openStream(ctx, sess.mux)
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("opening a stream to the agent of cluster %q: %w", cluster, errors.Join(errs...))
}

// openStream opens a stream, giving up when ctx ends. Opening only blocks
// while the agent has many streams not yet acknowledged.
func openStream(ctx context.Context, mux *yamux.Session) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		conn, err := mux.Open()
		ch <- result{conn, err}
	}()
	select {
	case res := <-ch:
		return res.conn, res.err
	case <-ctx.Done():
		go func() {
			if res := <-ch; res.conn != nil {
				_ = res.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// Close closes every tunnel and refuses new ones; agents reconnect to
// another replica. Call it when the server shuts down: the HTTP server does
// not close connections it handed over.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	var all []*session
	for _, list := range s.sessions {
		all = append(all, list...)
	}
	s.mu.Unlock()
	for _, sess := range all {
		_ = sess.mux.Close()
	}
}

func (s *Server) isClosed() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.closed
}

// writeError writes err as a JSON metav1.Status.
func writeError(w http.ResponseWriter, err error) {
	var st metav1.Status
	var apiErr apierrors.APIStatus
	if errors.As(err, &apiErr) {
		st = apiErr.Status()
	} else {
		st = apierrors.NewInternalError(err).Status()
	}
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(&st)
}
