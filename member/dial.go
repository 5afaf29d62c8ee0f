package member

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// upgradeDialer dials the member for upgraded streams. The upgrade-aware
// handler writes the upgrade request onto a raw connection it gets from the
// transport's dialer, bypassing http.Transport.Proxy, so the dialer itself
// tunnels through the cluster's proxy: HTTP CONNECT (over TLS for an https
// proxy) with spec.proxyHeader and basic auth from the URL's userinfo, or
// SOCKS5. It picks the proxy with the same function as the plain transport.
type upgradeDialer struct {
	proxy  func(*http.Request) (*url.URL, error)
	header http.Header
	// scheme is the member's scheme, which selects the environment proxy.
	scheme string
	// tlsConfig is used towards an https proxy, as net/http does.
	tlsConfig *tls.Config
	dialer    *net.Dialer
}

// DialContext opens a connection to addr, through the proxy if there is one.
func (d *upgradeDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	proxyURL, err := d.proxy(&http.Request{URL: &url.URL{Scheme: d.scheme, Host: addr}})
	if err != nil {
		return nil, fmt.Errorf("choosing proxy for %s: %w", addr, err)
	}
	if proxyURL == nil {
		return d.dialer.DialContext(ctx, network, addr)
	}

	conn, err := d.dialer.DialContext(ctx, "tcp", proxyAddr(proxyURL))
	if err != nil {
		return nil, fmt.Errorf("dialing proxy %s: %w", proxyURL.Redacted(), err)
	}
	// Bound the handshake with the proxy by the context's deadline.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(dialTimeout)
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })

	var tunnel net.Conn
	switch proxyURL.Scheme {
	case "https":
		cfg := d.tlsConfig.Clone()
		cfg.ServerName = proxyURL.Hostname()
		cfg.NextProtos = nil
		tlsConn := tls.Client(conn, cfg)
		if err = tlsConn.HandshakeContext(ctx); err != nil {
			err = fmt.Errorf("TLS handshake with proxy: %w", err)
			break
		}
		tunnel, err = connectTunnel(tlsConn, addr, d.header, proxyURL)
	case "http":
		tunnel, err = connectTunnel(conn, addr, d.header, proxyURL)
	case "socks5", "socks5h":
		if err = socks5Connect(conn, addr, proxyURL.User); err == nil {
			tunnel = conn
		}
	default:
		err = fmt.Errorf("unsupported proxy scheme %q", proxyURL.Scheme)
	}
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("tunnelling to %s through proxy %s: %w", addr, proxyURL.Redacted(), err)
	}
	_ = tunnel.SetDeadline(time.Time{})
	return tunnel, nil
}

// proxyAddr returns host:port of a proxy URL, with the scheme's default port.
func proxyAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "1080"
	switch u.Scheme {
	case "http":
		port = "80"
	case "https":
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// connectTunnel asks an HTTP proxy to open a tunnel to addr.
func connectTunnel(conn net.Conn, addr string, header http.Header, proxyURL *url.URL) (net.Conn, error) {
	req := &http.Request{
		Method: http.MethodConnect,
		URL:    &url.URL{Opaque: addr},
		Host:   addr,
		Header: header.Clone(),
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if u := proxyURL.User; u != nil && req.Header.Get("Proxy-Authorization") == "" {
		password, _ := u.Password()
		basic := &http.Request{Header: http.Header{}}
		basic.SetBasicAuth(u.Username(), password)
		req.Header.Set("Proxy-Authorization", basic.Header.Get("Authorization"))
	}
	if err := req.Write(conn); err != nil {
		return nil, fmt.Errorf("writing CONNECT: %w", err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, fmt.Errorf("reading CONNECT response: %w", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("proxy refused CONNECT: %s", resp.Status)
	}
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

// bufferedConn is a connection whose first bytes were already read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// SOCKS5 protocol constants (RFC 1928, RFC 1929).
const (
	socks5Version          = 0x05
	socks5AuthNone         = 0x00
	socks5AuthPassword     = 0x02
	socks5AuthNoAcceptable = 0xff
	socks5CmdConnect       = 0x01
	socks5AddrIPv4         = 0x01
	socks5AddrDomain       = 0x03
	socks5AddrIPv6         = 0x04
	socks5PasswordVersion  = 0x01
)

// socks5Connect asks a SOCKS5 proxy to connect to addr, authenticating with
// username and password when the proxy URL carries them.
func socks5Connect(conn net.Conn, addr string, user *url.Userinfo) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return fmt.Errorf("invalid port in %q", addr)
	}

	methods := []byte{socks5AuthNone}
	if user != nil {
		methods = append(methods, socks5AuthPassword)
	}
	greeting := append([]byte{socks5Version, byte(len(methods))}, methods...)
	if _, err := conn.Write(greeting); err != nil {
		return err
	}
	var reply [2]byte
	if _, err := io.ReadFull(conn, reply[:]); err != nil {
		return fmt.Errorf("reading SOCKS5 method: %w", err)
	}
	if reply[0] != socks5Version {
		return fmt.Errorf("not a SOCKS5 proxy (version %d)", reply[0])
	}
	switch reply[1] {
	case socks5AuthNone:
	case socks5AuthPassword:
		if user == nil {
			return errors.New("SOCKS5 proxy requires a username and password")
		}
		name := user.Username()
		password, _ := user.Password()
		if len(name) > 255 || len(password) > 255 {
			return errors.New("SOCKS5 username or password longer than 255 bytes")
		}
		msg := []byte{socks5PasswordVersion, byte(len(name))}
		msg = append(msg, name...)
		msg = append(msg, byte(len(password)))
		msg = append(msg, password...)
		if _, err := conn.Write(msg); err != nil {
			return err
		}
		if _, err := io.ReadFull(conn, reply[:]); err != nil {
			return fmt.Errorf("reading SOCKS5 authentication status: %w", err)
		}
		if reply[1] != 0 {
			return errors.New("SOCKS5 authentication failed")
		}
	case socks5AuthNoAcceptable:
		return errors.New("SOCKS5 proxy accepts none of our authentication methods")
	default:
		return fmt.Errorf("SOCKS5 proxy chose unsupported method %d", reply[1])
	}

	req := []byte{socks5Version, socks5CmdConnect, 0}
	if ip := net.ParseIP(host); ip != nil {
		if ip4 := ip.To4(); ip4 != nil {
			req = append(append(req, socks5AddrIPv4), ip4...)
		} else {
			req = append(append(req, socks5AddrIPv6), ip.To16()...)
		}
	} else {
		if len(host) > 255 {
			return fmt.Errorf("host name %q too long for SOCKS5", host)
		}
		req = append(append(req, socks5AddrDomain, byte(len(host))), host...)
	}
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	if _, err := conn.Write(req); err != nil {
		return err
	}

	var head [4]byte // version, reply, reserved, address type
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return fmt.Errorf("reading SOCKS5 reply: %w", err)
	}
	if head[1] != 0 {
		return fmt.Errorf("SOCKS5 proxy refused CONNECT (reply %d)", head[1])
	}
	var skip int
	switch head[3] {
	case socks5AddrIPv4:
		skip = net.IPv4len
	case socks5AddrIPv6:
		skip = net.IPv6len
	case socks5AddrDomain:
		var n [1]byte
		if _, err := io.ReadFull(conn, n[:]); err != nil {
			return err
		}
		skip = int(n[0])
	default:
		return fmt.Errorf("SOCKS5 reply has unknown address type %d", head[3])
	}
	// Bound address and port: not needed.
	if _, err := io.CopyN(io.Discard, conn, int64(skip+2)); err != nil {
		return fmt.Errorf("reading SOCKS5 bound address: %w", err)
	}
	return nil
}
