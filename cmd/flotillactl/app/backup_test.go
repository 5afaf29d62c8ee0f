package app

import (
	"bytes"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

func TestBackupRestoreCommandLineErrors(t *testing.T) {
	t.Parallel()
	restore := []string{"restore", "--snapshot=s.db"}
	member := []string{"--name=e0", "--initial-advertise-peer-urls=http://127.0.0.1:2380", "--initial-cluster=e0=http://127.0.0.1:2380"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backup"}, "either --embedded-etcd-dir or --etcd-servers is required"},
		{[]string{"backup", "--embedded-etcd-dir=d", "--etcd-servers=http://e:2379"}, "exclude each other"},
		{[]string{"backup", "--etcd-servers=http://e0:2379,http://e1:2379"}, "one etcd member"},
		{[]string{"backup", "--embedded-etcd-dir=d", "--etcd-cafile=ca.crt"}, "apply to --etcd-servers only"},
		{[]string{"backup", "--etcd-servers=https://e:2379", "--etcd-certfile=c.crt"}, "go together"},
		{[]string{"backup", "--embedded-etcd-dir=" + t.TempDir()}, "not an embedded etcd dir"},
		{[]string{"backup", "extra", "--embedded-etcd-dir=d"}, "unknown command"},
		{[]string{"restore", "--embedded-etcd-dir=d"}, "--snapshot is required"},
		{restore, "either --embedded-etcd-dir or --data-dir is required"},
		{append(restore, "--embedded-etcd-dir=d", "--data-dir=x"), "exclude each other"},
		{append(restore, "--embedded-etcd-dir=d", "--name=e0"), "go with --data-dir only"},
		{append(restore, "--data-dir=x", "--name=e0"), "--data-dir needs the member"},
		{append(append(restore, "--data-dir="+filepath.Join(t.TempDir(), "x")), member...), "no such file"},
	} {
		cmd := NewCommand("flotillactl")
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(tc.args)
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { mustContain(t, cmd.Execute(), tc.want) })
	}
}

// TestBackupRestoreExternalEtcd: backup of an external etcd member, then
// restore into a new member's data dir from which etcd starts with the keys.
func TestBackupRestoreExternalEtcd(t *testing.T) {
	t.Parallel()
	client, peer, stop := startEtcd(t, t.TempDir(), "e0", nil)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	if _, err := cli.Put(t.Context(), "/registry/flotilla/clusters/member1", "m1"); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(t.TempDir(), "flotilla.db")
	out := run(t, "backup", "--etcd-servers="+client, "-o", snap)
	if !strings.Contains(out, "written to "+snap) || !strings.Contains(out, "revision ") {
		t.Errorf("backup printed %q; want where it wrote and the revision", out)
	}

	// The restored member takes the old one's peer URL: the old one goes.
	stop()
	data := filepath.Join(t.TempDir(), "e0")
	out = run(t, "restore", "--snapshot="+snap, "--data-dir="+data, "--name=e0",
		"--initial-advertise-peer-urls="+peer, "--initial-cluster=e0="+peer)
	if !strings.Contains(out, "into "+data) {
		t.Errorf("restore printed %q; want the data dir", out)
	}
	restored, _, _ := startEtcd(t, data, "e0", &peer)
	rcli, err := clientv3.New(clientv3.Config{Endpoints: []string{restored}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rcli.Close() }()
	resp, err := rcli.Get(t.Context(), "/registry/flotilla/clusters/member1")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "m1" {
		t.Fatalf("restored etcd: %v, %v; want the key back", resp, err)
	}
}

// run runs flotillactl with args and returns what it printed.
func run(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := NewCommand("flotillactl")
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("flotillactl %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// startEtcd starts a one-member etcd named name with its data in dir, on a
// fresh client port and on peer if given (a restored member keeps its
// peer URL), until stopped or the test ends. It returns its client and peer
// URLs and what stops it.
func startEtcd(t *testing.T, dir, name string, peer *string) (string, string, func()) {
	t.Helper()
	free := func() url.URL {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }() // only the port is wanted
		return url.URL{Scheme: "http", Host: l.Addr().String()}
	}
	c, p := free(), free()
	if peer != nil {
		u, err := url.Parse(*peer)
		if err != nil {
			t.Fatal(err)
		}
		p = *u
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir, cfg.LogLevel, cfg.UnsafeNoFsync = name, dir, "panic", true
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{c}, []url.URL{c}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{p}, []url.URL{p}
	cfg.InitialCluster = cfg.InitialClusterFromName(name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(e.Close) }
	t.Cleanup(stop)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("etcd was not ready after a minute")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	return c.String(), p.String(), stop
}
