package env

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestFirstUnicastIPv4(t *testing.T) {
	t.Parallel()
	cidr := func(s string) net.Addr {
		ip, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		n.IP = ip
		return n
	}
	tests := []struct {
		name  string
		addrs []net.Addr
		want  string
	}{
		{"first IPv4 of an interface", []net.Addr{cidr("192.0.2.2/24"), cidr("198.51.100.7/24")}, "192.0.2.2"},
		{"IPv6 and link-local skipped", []net.Addr{cidr("2001:db8::1/64"), cidr("169.254.3.4/16"), cidr("203.0.113.9/24")}, "203.0.113.9"},
		{"loopback only", []net.Addr{cidr("127.0.0.1/8"), cidr("::1/128")}, ""},
		{"none", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ip, err := firstUnicastIPv4(tc.addrs)
			if tc.want == "" {
				if !errors.Is(err, ErrNoHostIP) {
					t.Fatalf("got %v, %v; want ErrNoHostIP", ip, err)
				}
				return
			}
			if err != nil || ip.String() != tc.want {
				t.Fatalf("got %v, %v; want %s", ip, err, tc.want)
			}
		})
	}
}

func TestHostAggregatorRouting(t *testing.T) {
	t.Parallel()
	const flag = "--enable-aggregator-routing=true"
	tests := []struct {
		name    string
		cluster Cluster
		want    bool
	}{
		{"host in HA mode", Cluster{Name: "host", Role: RoleHost, AggregatorRouting: true}, true},
		{"host", Cluster{Name: "host", Role: RoleHost}, false},
		{"member", Cluster{Name: "m1", Role: RoleMember}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := slices.Contains(tc.cluster.apiserverArgs("http://127.0.0.1:1"), flag); got != tc.want {
				t.Errorf("%s in the flags: %v, want %v", flag, got, tc.want)
			}
		})
	}
}

func TestHAOptionsComplete(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	for _, b := range []string{binEtcd, binAPIServer, binKCM, binScheduler, binKwok, fileKwokStages, fileKwokMetrics, binMetricsServer, binCustomMetrics, FlotillaComponent} {
		if err := os.WriteFile(filepath.Join(bin, b), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name         string
		ha           HAOptions
		wantReplicas int
		wantMembers  int
	}{
		{"defaults", HAOptions{}, 2, 3},
		{"given", HAOptions{Replicas: 3, EtcdMembers: 5}, 3, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ha := tc.ha
			o := Options{BinDir: bin, StateDir: "s", HA: &ha}
			if err := o.complete(); err != nil {
				t.Fatal(err)
			}
			if o.HA.Replicas != tc.wantReplicas || o.HA.EtcdMembers != tc.wantMembers {
				t.Errorf("HA %+v, want %d replicas and %d etcd members", *o.HA, tc.wantReplicas, tc.wantMembers)
			}
			if o.Flotilla == nil {
				t.Error("HA did not start flotilla-apiserver")
			}
		})
	}
}

func TestReplicaOfIdentity(t *testing.T) {
	t.Parallel()
	// This test binary stands for a running replica 1; replica 0 is gone.
	self := os.Getpid()
	e := &Environment{HA: &HA{ReplicaPorts: []int{1, 2}}, Host: &Cluster{Processes: []*Process{
		{Component: ReplicaComponent(0), PID: 1 << 30, Binary: os.Args[0]},
		{Component: ReplicaComponent(1), PID: self, Binary: os.Args[0]},
	}}}
	tests := []struct {
		id   string
		want int
	}{
		{"node-a_" + strconv.Itoa(self), 1},
		{"node_with_underscores_" + strconv.Itoa(self), 1},
		{"node-a_" + strconv.Itoa(1<<30), -1}, // replica 0's pid, not running
		{"node-a_12x", -1},
		{"node-a", -1},
		{"", -1},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			if got := e.replicaOfIdentity(tc.id); got != tc.want {
				t.Errorf("replicaOfIdentity(%q) = %d, want %d", tc.id, got, tc.want)
			}
		})
	}
}
