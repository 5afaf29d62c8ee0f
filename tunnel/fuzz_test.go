package tunnel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/flotilla-io/flotilla/names"
)

// The control plane parses what an agent sends on its tunnel connection:
// the upgrade request (isTunnelRequest, then whatever net/http buffered
// past its head, bufferedConn), and then yamux frames, for as long as the
// tunnel lives. An agent's credentials are only as safe as its host, so
// none of those bytes may crash or wedge flotilla-apiserver.
// FuzzServerTunnel plays the agent with arbitrary bytes.

// yamux frame types and flags (github.com/hashicorp/yamux const.go), to
// write seed frames.
const (
	frameData, frameWindowUpdate, framePing, frameGoAway = 0, 1, 2, 3
	flagSYN, flagACK, flagFIN, flagRST                   = 1, 2, 4, 8
)

// frame encodes one yamux frame: version 0, type, flags, stream, length,
// then the body of a data frame.
func frame(typ byte, flags uint16, stream, length uint32, body string) []byte {
	b := make([]byte, 12, 12+len(body))
	b[1] = typ
	binary.BigEndian.PutUint16(b[2:4], flags)
	binary.BigEndian.PutUint32(b[4:8], stream)
	binary.BigEndian.PutUint32(b[8:12], length)
	return append(b, body...)
}

func frames(fs ...[]byte) []byte { return bytes.Join(fs, nil) }

const upgradeRequest = "POST /apis/cluster.karmada.io/v1alpha1/clusters/c1/tunnel HTTP/1.1\r\n" +
	"Host: control-plane\r\nConnection: Upgrade\r\nUpgrade: " + Protocol + "\r\nContent-Length: 0\r\n\r\n"

// memberResponse is what the agent answers on stream 1, the control
// plane's first request.
const memberResponse = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

func FuzzServerTunnel(f *testing.F) {
	answer := frames(
		frame(frameWindowUpdate, flagACK, 1, 0, ""),
		frame(frameData, 0, 1, uint32(len(memberResponse)), memberResponse),
		frame(frameData, flagFIN, 1, 0, ""),
	)
	seeds := []struct{ request, frames []byte }{
		// The agent answers the control plane's request, pings, leaves.
		{[]byte(upgradeRequest), frames(answer, frame(framePing, flagSYN, 0, 7, ""), frame(frameGoAway, 0, 0, 0, ""))},
		// Frames sent together with the request: net/http buffers them.
		{append([]byte(upgradeRequest), answer...), nil},
		// The agent opens streams of its own, and resets one.
		{[]byte(upgradeRequest), frames(frame(frameWindowUpdate, flagSYN, 2, 0, ""), frame(frameData, 0, 2, 3, "abc"),
			frame(frameWindowUpdate, flagSYN, 4, 1<<30, ""), frame(frameData, flagRST, 4, 0, ""))},
		// Bad frames: wrong version, unknown type, a length past the body,
		// a window update past any window.
		{[]byte(upgradeRequest), append([]byte{1}, frame(frameData, 0, 1, 1, "x")[1:]...)},
		{[]byte(upgradeRequest), frame(9, flagSYN, 1, 0, "")},
		{[]byte(upgradeRequest), frame(frameData, flagACK, 1, 1<<31, "short")},
		{[]byte(upgradeRequest), frame(frameWindowUpdate, flagACK, 1, 0xffffffff, "")},
		// Requests that are no tunnel: another protocol, a GET, HTTP/1.0,
		// a list of protocols, an upgrade without Connection, garbage.
		{[]byte(strings.Replace(upgradeRequest, Protocol, "websocket", 1)), nil},
		{[]byte(strings.Replace(upgradeRequest, "POST", "GET", 1)), answer},
		{[]byte(strings.Replace(upgradeRequest, "HTTP/1.1", "HTTP/1.0", 1)), answer},
		{[]byte(strings.Replace(upgradeRequest, "Upgrade: "+Protocol, "Upgrade: h2c, "+strings.ToUpper(Protocol), 1)), answer},
		{[]byte(strings.Replace(upgradeRequest, "Connection: Upgrade\r\n", "", 1)), answer},
		{[]byte(strings.Replace(upgradeRequest, "Content-Length: 0", "Transfer-Encoding: chunked", 1)), []byte("5\r\nhello\r\n0\r\n\r\n")},
		{[]byte("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03"), nil},
		{[]byte(upgradeRequest[:40]), nil},
	}
	for _, s := range seeds {
		f.Add(s.request, s.frames)
	}
	f.Fuzz(func(t *testing.T, req, after []byte) {
		serveAgentBytes(t, req, after)
	})
}

// serveAgentBytes serves one tunnel connection whose agent sends req, then
// (once the control plane answered it, and opened a stream when it
// upgraded) after, then hangs up. It fails when the control plane does not
// let go of the tunnel after the agent left.
//
// net/http's server is left out: the request head is parsed with
// http.ReadRequest, and what it buffered past the head is handed over with
// the connection as the server's Hijack would. This keeps each run
// deterministic: the test knows when the control plane has answered.
func serveAgentBytes(t *testing.T, req, after []byte) {
	const cluster = "c1"
	const wait = 10 * time.Second // bounds every step: a wedged side fails, not hangs
	br := bufio.NewReader(bytes.NewReader(req))
	r, err := http.ReadRequest(br)
	if err != nil {
		return // net/http refuses it before any of the tunnel's code runs
	}
	// What net/http read past the head stays buffered for the tunnel.
	buffered, _ := io.ReadAll(br)
	s := NewServer()
	defer s.Close()
	agentEnd, serverEnd := net.Pipe()
	_ = agentEnd.SetDeadline(time.Now().Add(wait))
	defer func() {
		_ = agentEnd.SetDeadline(time.Time{}) // stops its timer, which holds the pipe
		_ = agentEnd.Close()
	}()
	w := newHijackWriter(serverEnd, buffered)

	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(io.Discard, agentEnd)
	}()
	handled := make(chan struct{})
	agent := &user.DefaultInfo{Name: names.AgentUserPrefix + cluster}
	go func() {
		defer close(handled)
		s.Handler(cluster).ServeHTTP(w, r.WithContext(request.WithUser(context.Background(), agent)))
	}()

	select {
	case <-w.taken:
	case <-handled:
		select {
		case <-w.taken:
		default:
			t.Fatal("the handler returned without answering")
		}
	case <-time.After(wait):
		t.Fatal("the handler neither answered nor took the connection over")
	}
	if !w.isHijack.Load() {
		// Not a tunnel: answered with an error, the connection untouched.
		<-handled
		if w.isHijack.Load() || w.code < 400 {
			t.Fatalf("a request that is no tunnel was answered %d (hijacked %t)", w.code, w.isHijack.Load())
		}
		return
	}
	if waitConnected(t, s, cluster, handled, wait) {
		defer requestOverTunnel(s, cluster)()
	}
	_, _ = agentEnd.Write(after)
	_ = agentEnd.Close()
	select {
	case <-handled:
	case <-time.After(wait):
		t.Fatal("the tunnel handler did not return after the agent hung up")
	}
	if s.Connected(cluster) {
		t.Fatal("the tunnel is still registered after the agent hung up")
	}
	<-drained
}

// hijackWriter is the http.ResponseWriter of one request: it records an
// answer, or hands its connection over with the bytes read past the head.
type hijackWriter struct {
	header http.Header
	code   int
	conn   net.Conn
	brw    *bufio.ReadWriter
	// taken is closed when the handler hijacks, or answers.
	taken    chan struct{}
	once     sync.Once
	isHijack atomic.Bool
}

func newHijackWriter(conn net.Conn, buffered []byte) *hijackWriter {
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(buffered), conn), max(4096, len(buffered)))
	_, _ = r.Peek(len(buffered)) // buffered, as net/http leaves them
	return &hijackWriter{header: http.Header{}, conn: conn, brw: bufio.NewReadWriter(r, bufio.NewWriter(conn)), taken: make(chan struct{})}
}

func (w *hijackWriter) Header() http.Header { return w.header }

func (w *hijackWriter) WriteHeader(code int) {
	w.code = code
	w.once.Do(func() { close(w.taken) })
}

func (w *hijackWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return len(b), nil
}

func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.isHijack.Store(true)
	w.once.Do(func() { close(w.taken) })
	return w.conn, w.brw, nil
}

// waitConnected waits until the upgraded tunnel is registered, and says
// whether it is; a session the agent's bytes already broke may end first.
func waitConnected(t *testing.T, s *Server, cluster string, handled <-chan struct{}, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for !s.Connected(cluster) {
		select {
		case <-handled:
			return false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("an upgraded tunnel was never registered")
		}
		time.Sleep(20 * time.Microsecond)
	}
	return true
}

// requestOverTunnel sends one request to the member over a new stream, as
// clusters/{name}/proxy would, and reads the answer if one comes; stop
// waits for it to end, which the agent hanging up ensures. The stream is
// left to die with its session rather than closed: a stream closed while
// its session lives keeps yamux's 5-minute close timer, and with it the
// session's memory, which thousands of runs a second would pile up.
func requestOverTunnel(s *Server, cluster string) (stop func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial, _ := s.DialContext(cluster)
	conn, err := dial(ctx, "tcp", "")
	if err != nil {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, "GET /version HTTP/1.1\r\nHost: "+cluster+".tunnel\r\n\r\n"); err != nil {
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
	})
	return wg.Wait
}

// The agent parses the control plane's answer to its upgrade request (101,
// or a refusal whose Status message it reports), then yamux frames and
// the HTTP requests of the control plane's streams. FuzzAgentTunnel plays
// the control plane with arbitrary bytes.
func FuzzAgentTunnel(f *testing.F) {
	const switching = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + Protocol + "\r\n\r\n"
	get := "GET /api HTTP/1.1\r\nHost: member.tunnel\r\nImpersonate-User: tom\r\n\r\n"
	status := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"only the agent of cluster \"c1\" may open its tunnel","code":403}`
	for _, seed := range [][]byte{
		// A request on stream 1, then a ping and a goodbye.
		append([]byte(switching), frames(frame(frameWindowUpdate, flagSYN, 1, 0, ""), frame(frameData, 0, 1, uint32(len(get)), get),
			frame(framePing, flagSYN, 0, 1, ""), frame(frameGoAway, 0, 0, 1, ""))...),
		// A stream closed at once, and one reset.
		append([]byte(switching), frames(frame(frameWindowUpdate, flagSYN|flagFIN, 1, 0, ""), frame(frameWindowUpdate, flagSYN|flagRST, 3, 0, ""))...),
		// Refusals: a Status, plain text, nothing, a body longer than sent.
		[]byte("HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(status)) + "\r\n\r\n" + status),
		[]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\n\r\nnope\n"),
		[]byte("HTTP/1.1 503 Service Unavailable\r\n\r\n"),
		[]byte("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1000000\r\n\r\n{\"message\":"),
		[]byte("HTTP/1.1 302 Found\r\nLocation: http://elsewhere/\r\n\r\n"),
		[]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n"),
		[]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
		[]byte("SSH-2.0-OpenSSH_9.6\r\n"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		serveControlPlaneBytes(t, answer)
	})
}

// serveControlPlaneBytes runs one connection of an agent to a control
// plane that answers its upgrade request with answer, then hangs up. It
// fails when the agent does not give the connection up.
func serveControlPlaneBytes(t *testing.T, answer []byte) {
	const wait = 10 * time.Second
	agentEnd, cpEnd := net.Pipe()
	_ = cpEnd.SetDeadline(time.Now().Add(wait))
	defer func() {
		_ = cpEnd.SetDeadline(time.Time{}) // stops its timer, which holds the pipe
		_ = cpEnd.Close()
	}()
	go func() {
		defer func() { _ = cpEnd.Close() }()
		if _, err := http.ReadRequest(bufio.NewReader(cpEnd)); err != nil {
			return
		}
		_, _ = cpEnd.Write(answer)
	}()
	dialed := false
	a := &agent{
		cluster: "c1",
		url:     "http://control-plane/apis/cluster.karmada.io/v1alpha1/clusters/c1/tunnel",
		client: &http.Client{
			Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
				if dialed {
					return nil, errors.New("one connection only")
				}
				dialed = true
				return agentEnd, nil
			}},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		// The member's part is not under test: it answers every request.
		handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "{}") }),
		config:  yamuxConfig(),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	start := time.Now()
	_, err := a.serveOnce(ctx)
	if ctx.Err() != nil || time.Since(start) > wait {
		t.Fatalf("the agent kept the connection %s after the control plane hung up (err %v)", time.Since(start), err)
	}
	if err == nil {
		t.Fatal("serveOnce returned no error although the tunnel ended")
	}
}
