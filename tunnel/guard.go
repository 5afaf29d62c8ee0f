package tunnel

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// What an agent may make the control plane hold. yamux bounds the bytes in
// flight per stream (the stream's window) but nothing per session, and it
// does work for two kinds of frames that cost the receiver and nothing to
// the sender:
//   - a stream the agent opens waits in the session's accept backlog (256
//     streams) with a window of 256 KiB each, 64 MiB in all, although the
//     control plane never accepts a stream: it opens them;
//   - each ping is answered by a goroutine of its own, which lives until
//     the answer is sent or ConnectionWriteTimeout passes, so an agent that
//     sends pings and stops reading makes a goroutine per 12 bytes.
//
// guardedConn sits under the control plane's session and reads the frame
// headers the agent sends: a stream the agent opens, or pings beyond
// agentPingRate, end the tunnel before yamux sees them. What an agent can
// make the control plane hold is then the unread bytes of the streams the
// control plane itself opened, at most maxStreamWindow each, which its
// readers take as they come.
const (
	// agentPingRate is how many pings an agent may send each second, on
	// average, and agentPingBurst how many at once. The agent pings every
	// keepAliveInterval.
	agentPingRate  = 1
	agentPingBurst = 8
)

// The yamux frame header (github.com/hashicorp/yamux's spec.md): version,
// type, flags, stream ID, length; a data frame's body of length bytes
// follows its header.
const (
	frameHeaderSize = 12

	yamuxTypeData         = 0
	yamuxTypeWindowUpdate = 1
	yamuxTypePing         = 2

	yamuxFlagSYN = 1
)

// guardedConn is an agent's connection as the control plane's session
// reads it; see above. Read returns an error, and nothing of the frame
// that broke a rule, once the agent broke one; the connection is closed
// then.
type guardedConn struct {
	net.Conn
	pings *rate.Limiter

	// The frame being read, used by the session's one reader only: header
	// collects its header, n of its bytes so far; body is how many bytes
	// of a data frame's body are left.
	header [frameHeaderSize]byte
	n      int
	body   uint32

	// refusal is the rule the agent broke (an error), set once.
	refusal atomic.Value
}

func guard(conn net.Conn) *guardedConn {
	return &guardedConn{Conn: conn, pings: rate.NewLimiter(agentPingRate, agentPingBurst)}
}

func (c *guardedConn) Read(p []byte) (int, error) {
	if err := c.broken(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if ferr := c.inspect(p[:n]); ferr != nil {
		c.refusal.Store(ferr)
		_ = c.Close()
		return 0, ferr
	}
	return n, err
}

// broken returns the rule the agent broke, if it broke one.
func (c *guardedConn) broken() error {
	err, _ := c.refusal.Load().(error)
	return err
}

// inspect follows the frames in b, the next bytes the agent sent.
func (c *guardedConn) inspect(b []byte) error {
	for len(b) > 0 {
		if c.body > 0 {
			skip := min(uint32(len(b)), c.body)
			c.body -= skip
			b = b[skip:]
			continue
		}
		k := copy(c.header[c.n:], b)
		c.n += k
		b = b[k:]
		if c.n < frameHeaderSize {
			return nil
		}
		c.n = 0
		if err := c.check(); err != nil {
			return err
		}
	}
	return nil
}

// check looks at one whole header.
func (c *guardedConn) check() error {
	typ := c.header[1]
	flags := binary.BigEndian.Uint16(c.header[2:4])
	stream := binary.BigEndian.Uint32(c.header[4:8])
	length := binary.BigEndian.Uint32(c.header[8:12])
	switch typ {
	case yamuxTypeData, yamuxTypeWindowUpdate:
		if flags&yamuxFlagSYN != 0 {
			return fmt.Errorf("the agent opened stream %d: the control plane opens the streams of a tunnel, agents only accept them", stream)
		}
		if typ == yamuxTypeData {
			c.body = length
		}
	case yamuxTypePing:
		if flags&yamuxFlagSYN != 0 && !c.pings.Allow() {
			return fmt.Errorf("the agent sent pings faster than %d a second", agentPingRate)
		}
	}
	return nil
}
