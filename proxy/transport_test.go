package proxy

import (
	"net/http"
	"testing"
)

// A deleted cluster's transport is dropped, whether the proxy learns of the
// deletion from a request to it or from a clusters/*/proxy listing: a
// cluster of the same name created later gets a transport of its own.
func TestDeletedClusterTransportIsForgotten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		request string
	}{
		{name: "request to the cluster", request: "/clusters/m2/proxy/api/v1/nodes"},
		{name: "fan-out", request: "/clusters/*/proxy/api/v1/nodes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore()
			s.addCluster("m1", newMember(t, false, nil), nil)
			s.addCluster("m2", newMember(t, false, nil), nil)
			c := s.connecter()
			before := map[string]*target{}
			for _, name := range []string{"m1", "m2"} {
				tg, err := c.target(name)
				if err != nil {
					t.Fatal(err)
				}
				before[name] = tg
			}
			s.mu.Lock()
			m2 := s.clusters["m2"]
			delete(s.clusters, "m2")
			s.mu.Unlock()
			_ = do(c, tom, http.MethodGet, tc.request, nil, "")
			s.mu.Lock()
			s.clusters["m2"] = m2
			s.mu.Unlock()
			for name, wantSame := range map[string]bool{"m1": true, "m2": false} {
				after, err := c.target(name)
				if err != nil {
					t.Fatal(err)
				}
				if same := after.Transport == before[name].Transport; same != wantSame {
					t.Errorf("%s: same transport = %t, want %t", name, same, wantSame)
				}
			}
		})
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
