// Package etcdlayout is the on-disk layout of flotilla-apiserver's embedded
// etcd (--embedded-etcd-dir): where the etcd data lives, the member's name
// and the file that keeps its ports. The server starts etcd from it, and
// flotillactl backup and restore find and rebuild etcd with it. It starts
// nothing itself.
package etcdlayout

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
)

const (
	// MemberName is the name of the embedded etcd's single member.
	MemberName = "flotilla"
	// dataSubdir holds etcd's own data directory under the embedded etcd dir.
	dataSubdir = "data"
	// portsFile remembers the client and peer ports under the embedded etcd
	// dir: a single-member etcd keeps its peer URL in its data, so a restart
	// must reuse it, and flotillactl finds the client URL there.
	portsFile = "ports.json"
	// loopback is the only address the embedded etcd listens on.
	loopback = "127.0.0.1"
)

// DataDir is etcd's data directory (etcd --data-dir) under dir.
func DataDir(dir string) string { return filepath.Join(dir, dataSubdir) }

// Ports are the loopback ports of the embedded etcd.
type Ports struct {
	Client int `json:"client"`
	Peer   int `json:"peer"`
}

// ClientURL is where clients reach the embedded etcd.
func (p Ports) ClientURL() url.URL { return loopbackURL(p.Client) }

// PeerURL is the member's peer URL, persisted in etcd's data.
func (p Ports) PeerURL() url.URL { return loopbackURL(p.Peer) }

func loopbackURL(port int) url.URL {
	return url.URL{Scheme: "http", Host: net.JoinHostPort(loopback, strconv.Itoa(port))}
}

// LoadPorts reads the ports recorded under dir; the error wraps
// fs.ErrNotExist when none are.
func LoadPorts(dir string) (Ports, error) {
	var p Ports
	path := filepath.Join(dir, portsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("reading the embedded etcd's ports: %w", err)
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("reading %s: %w", path, err)
	}
	if p.Client <= 0 || p.Peer <= 0 {
		return p, fmt.Errorf("%s names no client or peer port", path)
	}
	return p, nil
}

// LoadOrPickPorts returns the ports recorded under dir, or picks two free
// loopback ports and records them there (dir must exist).
func LoadOrPickPorts(dir string) (Ports, error) {
	if _, err := os.Stat(filepath.Join(dir, portsFile)); err == nil {
		return LoadPorts(dir)
	}
	var p Ports
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close() // only the port was wanted
		}
	}()
	for _, port := range []*int{&p.Client, &p.Peer} {
		l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
		if err != nil {
			return p, err
		}
		ls = append(ls, l)
		*port = l.Addr().(*net.TCPAddr).Port
	}
	data, err := json.Marshal(p)
	if err != nil {
		return p, err
	}
	return p, os.WriteFile(filepath.Join(dir, portsFile), data, 0o600)
}
