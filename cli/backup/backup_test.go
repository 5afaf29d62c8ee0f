package backup_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/cli/backup"
	"github.com/flotilla-io/flotilla/server"
	"github.com/flotilla-io/flotilla/server/etcdlayout"
)

// prefix is where flotilla-apiserver keeps its objects.
const prefix = "/registry/flotilla/"

// snapshotOf starts the server's embedded etcd in a fresh dir, writes keys
// into it, saves a snapshot and stops it. It returns the snapshot, its
// status and the keys written.
func snapshotOf(t *testing.T, keys int) (string, backup.Status, map[string]string) {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	e, err := server.StartEmbeddedEtcd(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	want := map[string]string{}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	for i := range keys {
		k, v := fmt.Sprintf("%sworks/ns/w%d", prefix, i), fmt.Sprintf("value %d", i)
		if _, err := cli.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	url, err := backup.EmbeddedClientURL(dir)
	if err != nil {
		t.Fatal(err)
	}
	if url != e.ClientURL {
		t.Fatalf("EmbeddedClientURL(%s) = %s, the embedded etcd listens on %s", dir, url, e.ClientURL)
	}
	path := filepath.Join(t.TempDir(), "snap.db")
	st, err := backup.Save(ctx, zap.NewNop(), clientv3.Config{Endpoints: []string{url}}, path)
	if err != nil {
		t.Fatal(err)
	}
	return path, st, want
}

// TestSaveRestoreEmbedded: a snapshot of the embedded etcd, restored into a
// new embedded etcd dir, starts with server.StartEmbeddedEtcd and holds
// every key, at a revision moved past the snapshot's.
func TestSaveRestoreEmbedded(t *testing.T) {
	t.Parallel()
	const keys = 20
	path, st, want := snapshotOf(t, keys)
	if st.Path != path || st.Keys < keys || st.Revision < keys || st.Size == 0 || len(st.SHA256) != 64 {
		t.Fatalf("Save's status %+v: want path %s, at least %d keys and revision %d, a size and a digest", st, path, keys, keys)
	}

	dir := filepath.Join(t.TempDir(), "etcd")
	data, rst, err := backup.RestoreEmbedded(zap.NewNop(), path, dir, backup.DefaultRevisionBump)
	if err != nil {
		t.Fatal(err)
	}
	if data != etcdlayout.DataDir(dir) || rst != st {
		t.Fatalf("RestoreEmbedded = %s, %+v; want %s, %+v", data, rst, etcdlayout.DataDir(dir), st)
	}
	ctx := context.Background()
	e, err := server.StartEmbeddedEtcd(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range resp.Kvs {
		got[string(kv.Key)] = string(kv.Value)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("restored keys %v, want %v", got, want)
	}
	if resp.Header.Revision < st.Revision+backup.DefaultRevisionBump {
		t.Errorf("restored revision %d, want at least %d (snapshot's %d + bump)", resp.Header.Revision, st.Revision+backup.DefaultRevisionBump, st.Revision)
	}
	// Older revisions are compacted: a watcher from before the restore relists.
	if _, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(st.Revision)); err == nil || !strings.Contains(err.Error(), "compacted") {
		t.Errorf("reading at the snapshot's revision %d: %v, want compacted", st.Revision, err)
	}
	// A restarted server finds the same etcd at the same URL.
	if url, err := backup.EmbeddedClientURL(dir); err != nil || url != e.ClientURL {
		t.Errorf("EmbeddedClientURL after restore = %q, %v; want %s", url, err, e.ClientURL)
	}
}

// TestVerifyRejects: Verify and Restore refuse a damaged snapshot and write nothing.
func TestVerifyRejects(t *testing.T) {
	t.Parallel()
	path, st, _ := snapshotOf(t, 3)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
		{"digest cut off", func(b []byte) []byte { return b[:len(b)-32] }},
		{"a byte flipped", func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b }},
		{"digest flipped", func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bad := filepath.Join(t.TempDir(), "bad.db")
			if err := os.WriteFile(bad, tc.damage(append([]byte(nil), good...)), 0o600); err != nil {
				t.Fatal(err)
			}
			if got, err := backup.Verify(zap.NewNop(), bad); err == nil {
				t.Errorf("Verify accepted it: %+v", got)
			}
			dir := filepath.Join(t.TempDir(), "etcd")
			if _, _, err := backup.RestoreEmbedded(zap.NewNop(), bad, dir, 0); err == nil {
				t.Error("RestoreEmbedded accepted it")
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("RestoreEmbedded wrote %s (%v)", dir, err)
			}
		})
	}
	// The undamaged file still verifies, with the status Save reported.
	if got, err := backup.Verify(zap.NewNop(), path); err != nil || got != st {
		t.Errorf("Verify(undamaged) = %+v, %v; want %+v", got, err, st)
	}
}

// TestRestoreEmbeddedRefusesData: a dir whose etcd data is still there is
// left alone; etcd's data is never overwritten.
func TestRestoreEmbeddedRefusesData(t *testing.T) {
	t.Parallel()
	path, _, _ := snapshotOf(t, 1)
	dir := t.TempDir()
	marker := filepath.Join(etcdlayout.DataDir(dir), "member")
	if err := os.MkdirAll(marker, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := backup.RestoreEmbedded(zap.NewNop(), path, dir, 0); err == nil || !strings.Contains(err.Error(), "already holds etcd data") {
		t.Errorf("RestoreEmbedded into a dir with data: %v, want a refusal", err)
	}
	if entries, err := os.ReadDir(marker); err != nil || len(entries) != 0 {
		t.Errorf("%s was changed: %v, %v", marker, entries, err)
	}
}

// TestSaveNeedsOneEndpoint: a snapshot comes from one member, named.
func TestSaveNeedsOneEndpoint(t *testing.T) {
	t.Parallel()
	for _, endpoints := range [][]string{nil, {"http://127.0.0.1:1", "http://127.0.0.1:2"}} {
		path := filepath.Join(t.TempDir(), "snap.db")
		if _, err := backup.Save(t.Context(), zap.NewNop(), clientv3.Config{Endpoints: endpoints}, path); err == nil {
			t.Errorf("Save with endpoints %v succeeded", endpoints)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("Save with endpoints %v wrote %s", endpoints, path)
		}
	}
}

// TestEmbeddedClientURLNeedsPorts: a dir no embedded etcd ran in is named as such.
func TestEmbeddedClientURLNeedsPorts(t *testing.T) {
	t.Parallel()
	if url, err := backup.EmbeddedClientURL(t.TempDir()); err == nil {
		t.Errorf("EmbeddedClientURL of an empty dir = %s", url)
	}
}
