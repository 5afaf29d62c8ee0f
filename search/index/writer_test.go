package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// podObj is a pod with one image and one label.
func podObj(cluster, ns, name, image, app string) (Key, map[string]interface{}) {
	p := podSpec{cluster: cluster, ns: ns, name: name, images: []string{image}, labels: map[string]string{"app": app}, phase: "Running"}
	return podKey(cluster, ns, name), p.object()
}

// hitNames runs a query and returns the sorted cluster/namespace/name of
// every hit.
func hitNames(t *testing.T, ix *Index, q string) []string {
	t.Helper()
	r := doSearch(t, ix, Request{Query: q, Size: maxSize})
	got := names(r.Hits)
	slices.Sort(got)
	return got
}

func TestDelete(t *testing.T) {
	ix := openTest(t, Options{})
	for _, n := range []string{"a", "b", "c"} {
		ix.Put(podObj("member1", "default", n, "nginx", "web"))
	}
	mustFlush(t, ix)
	ix.Delete(podKey("member1", "default", "b"))
	ix.Delete(podKey("member1", "default", "missing"))
	mustFlush(t, ix)
	if diff := cmp.Diff([]string{"member1/default/a", "member1/default/c"}, hitNames(t, ix, "")); diff != "" {
		t.Errorf("after Delete (-want +got):\n%s", diff)
	}
	if s := ix.Stats(); s.DocCount != 2 || s.Applied != 3 || s.Deleted != 2 {
		t.Errorf("Stats = %+v, want DocCount 2, Applied 3, Deleted 2", s)
	}
}

func TestPutReplaces(t *testing.T) {
	tests := []struct {
		name       string
		flushFirst bool // apply the first Put before the second
	}{
		{"in separate batches", true},
		{"in one batch", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, Options{})
			ix.Put(podObj("member1", "default", "a", "nginx:1", "old"))
			if tc.flushFirst {
				mustFlush(t, ix)
			}
			ix.Put(podObj("member1", "default", "a", "redis:7", "new"))
			mustFlush(t, ix)
			for q, want := range map[string][]string{
				"image:nginx":    nil,
				"labels.app:old": nil,
				"image:redis":    {"member1/default/a"},
				"label:app=new":  {"member1/default/a"},
				"":               {"member1/default/a"},
			} {
				if diff := cmp.Diff(want, hitNames(t, ix, q), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Search(%q) (-want +got):\n%s", q, diff)
				}
			}
			s := ix.Stats()
			if s.DocCount != 1 {
				t.Errorf("DocCount = %d, want 1", s.DocCount)
			}
			if !tc.flushFirst && s.Coalesced != 1 {
				t.Errorf("Coalesced = %d, want 1", s.Coalesced)
			}
		})
	}
}

func TestDeleteThenPutInOneBatch(t *testing.T) {
	ix := openTest(t, Options{})
	k, o := podObj("member1", "default", "a", "nginx", "web")
	ix.Put(k, o)
	mustFlush(t, ix)
	ix.Delete(k)
	ix.Put(k, o)
	ix.Put(podObj("member1", "default", "b", "nginx", "web"))
	ix.Delete(podKey("member1", "default", "b"))
	mustFlush(t, ix)
	if diff := cmp.Diff([]string{"member1/default/a"}, hitNames(t, ix, "")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDeleteResource(t *testing.T) {
	ix := openTest(t, Options{BatchSize: 4})
	for i := range 10 {
		ix.Put(podObj("member1", "ns-"+strconv.Itoa(i%3), "old-"+strconv.Itoa(i), "nginx", "web"))
		ix.Put(podObj("member2", "default", "keep-"+strconv.Itoa(i), "nginx", "web"))
	}
	mustFlush(t, ix)
	deploy := Key{Cluster: "member1", Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespace: "default", Name: "web"}
	ix.Put(deploy, map[string]interface{}{})
	// Queued before DeleteResource, not yet applied: deleted with the rest.
	ix.Put(podObj("member1", "default", "queued-before", "nginx", "web"))
	ix.DeleteResource("member1", "", "pods")
	// Queued after: kept.
	ix.Put(podObj("member1", "default", "put-after", "nginx", "web"))
	mustFlush(t, ix)

	got := hitNames(t, ix, "cluster:member1")
	want := []string{"member1/default/put-after", "member1/default/web"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("member1 after DeleteResource (-want +got):\n%s", diff)
	}
	if r := doSearch(t, ix, Request{Query: "cluster:member2"}); r.Total != 10 {
		t.Errorf("member2 has %d documents, want 10", r.Total)
	}
	if s := ix.Stats(); s.DocCount != 12 {
		t.Errorf("DocCount = %d, want 12", s.DocCount)
	}
	// Deleting an unknown resource is a no-op.
	ix.DeleteResource("member9", "", "pods")
	if err := ix.Flush(); err != nil {
		t.Errorf("Flush: %v", err)
	}
}

func TestFlushInterval(t *testing.T) {
	ix := openTest(t, Options{FlushInterval: 20 * time.Millisecond})
	ix.Put(podObj("member1", "default", "a", "nginx", "web"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if r := doSearch(t, ix, Request{}); r.Total == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a Put was not applied within 5s without Flush")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBatchSize(t *testing.T) {
	ix := openTest(t, Options{BatchSize: 3, FlushInterval: time.Hour})
	for i := range 10 {
		ix.Put(podObj("member1", "default", "p"+strconv.Itoa(i), "nginx", "web"))
	}
	mustFlush(t, ix)
	if s := ix.Stats(); s.Batches != 4 || s.Applied != 10 || s.DocCount != 10 {
		t.Errorf("Stats = %+v, want 4 batches of at most 3, 10 applied", s)
	}
}

func TestPutDoesNotRetainObject(t *testing.T) {
	ix := openTest(t, Options{FlushInterval: time.Hour})
	k, o := podObj("member1", "default", "a", "nginx", "before")
	ix.Put(k, o)
	o["metadata"].(map[string]interface{})["labels"].(map[string]interface{})["app"] = "after"
	o["spec"].(map[string]interface{})["containers"].([]interface{})[0].(map[string]interface{})["image"] = "redis"
	delete(o, "status")
	mustFlush(t, ix)
	for q, want := range map[string]uint64{"labels.app:before": 1, "labels.app:after": 0, "image:nginx": 1, "image:redis": 0, "phase:running": 1} {
		if r := doSearch(t, ix, Request{Query: q}); r.Total != want {
			t.Errorf("Search(%q).Total = %d, want %d", q, r.Total, want)
		}
	}
}

func TestConcurrentPutAndSearch(t *testing.T) {
	ix := openTest(t, Options{BatchSize: 50, FlushInterval: 5 * time.Millisecond})
	const writers, perWriter = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				k, o := kwokPod("member"+strconv.Itoa(w), i)
				ix.Put(k, o)
			}
		}()
	}
	stop := make(chan struct{})
	var searchErr error
	var sg sync.WaitGroup
	sg.Add(1)
	go func() {
		defer sg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := ix.Search(context.Background(), Request{Query: "kind:Pod phase:running"}); err != nil {
				searchErr = err
				return
			}
		}
	}()
	wg.Wait()
	mustFlush(t, ix)
	close(stop)
	sg.Wait()
	if searchErr != nil {
		t.Fatalf("Search during Puts: %v", searchErr)
	}
	if r := doSearch(t, ix, Request{}); r.Total != writers*perWriter {
		t.Errorf("Total = %d, want %d", r.Total, writers*perWriter)
	}
}

func TestClose(t *testing.T) {
	ix, err := Open(Options{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	dir := ix.tempDir
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("temporary index directory: %v", err)
	}
	for i := range 5 {
		ix.Put(podObj("member1", "default", "p"+strconv.Itoa(i), "nginx", "web"))
	}
	// Close applies what is queued.
	if err := ix.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if s := ix.Stats(); s.Applied != 5 {
		t.Errorf("Applied after Close = %d, want 5", s.Applied)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary index directory after Close: %v, want it gone", err)
	}
	if err := ix.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := ix.Search(context.Background(), Request{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Search after Close: %v, want ErrClosed", err)
	}
	if err := ix.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close: %v, want ErrClosed", err)
	}
	// Writes after Close are dropped, not a panic.
	ix.Put(podObj("member1", "default", "late", "nginx", "web"))
	ix.Delete(podKey("member1", "default", "p1"))
	ix.DeleteResource("member1", "", "pods")
}

func TestOpenDir(t *testing.T) {
	t.Run("created, used, recreated", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "index")
		ix, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		ix.Put(podObj("member1", "default", "a", "nginx", "web"))
		mustFlush(t, ix)
		if r := doSearch(t, ix, Request{Query: "image:nginx"}); r.Total != 1 {
			t.Errorf("Total = %d, want 1", r.Total)
		}
		if err := ix.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, metaFile)); err != nil {
			t.Fatalf("Close removed the index in Dir: %v", err)
		}
		// Reopening starts empty: the cache is rebuilt on start.
		ix = openTest(t, Options{Dir: dir})
		if r := doSearch(t, ix, Request{}); r.Total != 0 {
			t.Errorf("reopened index has %d documents, want 0", r.Total)
		}
		ix.Put(podObj("member1", "default", "b", "redis", "web"))
		mustFlush(t, ix)
		if diff := cmp.Diff([]string{"member1/default/b"}, hitNames(t, ix, "")); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("empty directory", func(t *testing.T) {
		dir := t.TempDir()
		ix := openTest(t, Options{Dir: dir})
		ix.Put(podObj("member1", "default", "a", "nginx", "web"))
		mustFlush(t, ix)
		if r := doSearch(t, ix, Request{}); r.Total != 1 {
			t.Errorf("Total = %d, want 1", r.Total)
		}
	})
	t.Run("foreign directory refused", func(t *testing.T) {
		dir := t.TempDir()
		keep := filepath.Join(dir, "precious.txt")
		if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if ix, err := Open(Options{Dir: dir}); err == nil {
			_ = ix.Close()
			t.Fatal("Open of a non-empty directory without an index succeeded")
		}
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("Open touched a foreign file: %v", err)
		}
	})
}
