package proxy

import (
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

func TestTargetCacheReuseAndRebuild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		change      func(s *store, m *fakeMember)
		wantRebuilt bool
		wantToken   string
	}{
		{name: "nothing changes", wantToken: "imp-m1"},
		{
			name: "status update only",
			change: func(s *store, _ *fakeMember) {
				s.updateCluster("m1", func(c *clusterv1alpha1.Cluster) {
					c.ResourceVersion = "2"
					c.Status.KubernetesVersion = "v1.36.3"
					c.Status.Conditions[0].LastTransitionTime = metav1.Now()
				})
			},
			wantToken: "imp-m1",
		},
		{
			name: "impersonator secret rotated",
			change: func(s *store, _ *fakeMember) {
				s.updateSecret(secretNamespace, "m1-impersonator", func(sec *corev1.Secret) {
					sec.ResourceVersion = "2"
					sec.Data["token"] = []byte("imp-rotated")
				})
			},
			wantRebuilt: true,
			wantToken:   "imp-rotated",
		},
		{
			name: "secretRef secret updated",
			change: func(s *store, _ *fakeMember) {
				s.updateSecret(secretNamespace, "m1", func(sec *corev1.Secret) { sec.ResourceVersion = "7" })
			},
			wantRebuilt: true,
			wantToken:   "imp-m1",
		},
		{
			name: "secret without resourceVersion changes content",
			change: func(s *store, _ *fakeMember) {
				s.updateSecret(secretNamespace, "m1-impersonator", func(sec *corev1.Secret) {
					sec.ResourceVersion = ""
					sec.Data["token"] = []byte("imp-no-rv")
				})
			},
			wantRebuilt: true,
			wantToken:   "imp-no-rv",
		},
		{
			name: "proxyHeader changed",
			change: func(s *store, _ *fakeMember) {
				s.updateCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyHeader = map[string]string{"X-A": "b"} })
			},
			wantRebuilt: true,
			wantToken:   "imp-m1",
		},
		{
			name: "insecureSkipTLSVerification toggled",
			change: func(s *store, _ *fakeMember) {
				s.updateCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.InsecureSkipTLSVerification = true })
			},
			wantRebuilt: true,
			wantToken:   "imp-m1",
		},
		{
			name: "apiEndpoint changed",
			change: func(s *store, m *fakeMember) {
				s.updateCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = m.URL + "/" })
			},
			wantRebuilt: true,
			wantToken:   "imp-m1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMember(t, false, nil)
			s := newStore()
			s.addCluster("m1", m, nil)
			c := s.connecter()
			before, err := c.targets.get("m1")
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := c.targets.get("m1"); again != before {
				t.Fatal("target rebuilt although nothing changed")
			}
			if tc.change != nil {
				tc.change(s, m)
			}
			after, err := c.targets.get("m1")
			if err != nil {
				t.Fatal(err)
			}
			if rebuilt := after != before; rebuilt != tc.wantRebuilt {
				t.Errorf("rebuilt = %t, want %t", rebuilt, tc.wantRebuilt)
			}
			if tc.wantRebuilt && after.transport == before.transport {
				t.Error("rebuilt target shares the old transport")
			}
			if again, _ := c.targets.get("m1"); again != after {
				t.Error("target rebuilt twice for one change")
			}
			rec := do(c, tom, http.MethodGet, "/clusters/m1/proxy/api/v1/nodes", nil, "")
			if rec.Code != http.StatusOK {
				t.Fatalf("code = %d; body %s", rec.Code, rec.Body)
			}
			if got, want := m.last(t).header.Get("Authorization"), "Bearer "+tc.wantToken; got != want {
				t.Errorf("Authorization = %q, want %q", got, want)
			}
		})
	}
}

func TestTargetCacheConcurrentRebuildBuildsOnce(t *testing.T) {
	t.Parallel()
	m := newMember(t, false, nil)
	s := newStore()
	s.addCluster("m1", m, nil)
	c := s.connecter()
	got := make([]*target, 32)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i], _ = c.targets.get("m1")
		})
	}
	wg.Wait()
	for _, tg := range got {
		if tg == nil || tg != got[0] {
			t.Fatal("concurrent first requests got different targets")
		}
	}
}

func TestTargetCacheForgetsDeletedCluster(t *testing.T) {
	t.Parallel()
	m := newMember(t, false, nil)
	s := newStore()
	s.addCluster("m1", m, nil)
	c := s.connecter()
	if _, err := c.targets.get("m1"); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	delete(s.clusters, "m1")
	s.mu.Unlock()
	if _, err := c.targets.get("m1"); err == nil {
		t.Fatal("want an error for a deleted cluster")
	}
	if _, ok := c.targets.load("m1"); ok {
		t.Error("target of a deleted cluster is still cached")
	}
}

func TestFanOutForgetsDeletedClusters(t *testing.T) {
	t.Parallel()
	s := newStore()
	s.addCluster("m1", newMember(t, false, nil), nil)
	s.addCluster("m2", newMember(t, false, nil), nil)
	c := s.connecter()
	for _, name := range []string{"m1", "m2"} {
		if _, err := c.targets.get(name); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	delete(s.clusters, "m2")
	s.mu.Unlock()
	_ = do(c, tom, http.MethodGet, "/clusters/*/proxy/api/v1/nodes", nil, "")
	if _, ok := c.targets.load("m2"); ok {
		t.Error("target of a deleted cluster is still cached after a fan-out")
	}
	if _, ok := c.targets.load("m1"); !ok {
		t.Error("target of a live cluster was dropped")
	}
}

func TestConnectionsAreKeptAlive(t *testing.T) {
	t.Parallel()
	for _, h2 := range []bool{false, true} {
		m := newMember(t, h2, nil)
		s := newStore()
		s.addCluster("m1", m, nil)
		c := s.connecter()
		for range 3 {
			rec := do(c, tom, http.MethodGet, "/clusters/m1/proxy/api/v1/nodes", nil, "")
			if rec.Code != http.StatusOK {
				t.Fatalf("code = %d; body %s", rec.Code, rec.Body)
			}
		}
		reqs := m.requests()
		for _, r := range reqs[1:] {
			if r.remote != reqs[0].remote {
				t.Errorf("http2=%t: requests came from %s and %s; want one kept-alive connection", h2, reqs[0].remote, r.remote)
			}
		}
	}
}
