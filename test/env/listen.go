package env

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// servedBy wraps a health check of the server on port so that it passes only
// when p itself listens there. Ports are chosen free a moment before a
// process binds them; another test binary may take one in between, and its
// server would otherwise answer the health check of the one that failed to
// bind (a kube-controller-manager's /healthz looks like any other).
func (p *Process) servedBy(port int, check func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := check(ctx); err != nil {
			return err
		}
		return p.listensOn(port)
	}
}

// listensOn reports, as an error when not, whether the process holds a
// listening TCP socket on port (read from /proc, Linux only).
func (p *Process) listensOn(port int) error {
	inodes, err := listeningInodes(port)
	if err != nil {
		return err
	}
	if len(inodes) == 0 {
		return fmt.Errorf("nothing listens on port %d", port)
	}
	dir := fmt.Sprintf("/proc/%d/fd", p.PID)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", p.Cluster, p.Component, err)
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue // closed since the directory was read
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
			return nil
		}
	}
	return fmt.Errorf("port %d is held by another process, not %s/%s (pid %d)", port, p.Cluster, p.Component, p.PID)
}

// listeningInodes returns the socket inodes listening on port, IPv4 or IPv6.
func listeningInodes(port int) (map[string]bool, error) {
	want := fmt.Sprintf(":%04X", port)
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		s := bufio.NewScanner(f)
		for s.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fields := strings.Fields(s.Text())
			if len(fields) < 10 || fields[3] != tcpListen || !strings.HasSuffix(fields[1], want) {
				continue
			}
			inodes[fields[9]] = true
		}
		err = s.Err()
		_ = f.Close() // read only
		if err != nil {
			return nil, err
		}
	}
	return inodes, nil
}

// urlPort returns the port of a loopback URL such as http://127.0.0.1:2379.
func urlPort(url string) int {
	port, _ := strconv.Atoi(url[strings.LastIndexByte(url, ':')+1:])
	return port
}
