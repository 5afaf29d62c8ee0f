package etcdlayout

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadOrPickPorts: ports are picked once, recorded, and the same ones
// come back on every later call (a restart must reuse the peer URL).
func TestLoadOrPickPorts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := LoadPorts(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadPorts of an empty dir: %v, want not exist", err)
	}
	first, err := LoadOrPickPorts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if first.Client <= 0 || first.Peer <= 0 || first.Client == first.Peer {
		t.Fatalf("picked %+v", first)
	}
	for _, load := range []func(string) (Ports, error){LoadOrPickPorts, LoadPorts} {
		again, err := load(dir)
		if err != nil || again != first {
			t.Errorf("ports again: %+v, %v; want %+v", again, err, first)
		}
	}
	if c, p := first.ClientURL(), first.PeerURL(); c.Hostname() != loopback || p.Hostname() != loopback || c.Port() == p.Port() {
		t.Errorf("URLs %s and %s: want two loopback ports", c.String(), p.String())
	}
}

func TestLoadPortsRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, content string }{
		{"not JSON", "client=1"},
		{"no peer", `{"client": 2379}`},
		{"no client", `{"peer": 2380}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, portsFile), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if p, err := LoadPorts(dir); err == nil {
				t.Errorf("LoadPorts accepted %q: %+v", tc.content, p)
			}
			if p, err := LoadOrPickPorts(dir); err == nil {
				t.Errorf("LoadOrPickPorts accepted %q: %+v", tc.content, p)
			}
		})
	}
}
