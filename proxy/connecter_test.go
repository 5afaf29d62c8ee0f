package proxy

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/member/membertest"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

func TestConnecterRESTInterface(t *testing.T) {
	t.Parallel()
	c := newStore().connecter()
	if _, ok := c.New().(*clusterv1alpha1.ClusterProxyOptions); !ok {
		t.Errorf("New() = %T, want *ClusterProxyOptions", c.New())
	}
	opts, subpath, key := c.NewConnectOptions()
	if _, ok := opts.(*clusterv1alpha1.ClusterProxyOptions); !ok || !subpath || key != "path" {
		t.Errorf("NewConnectOptions() = %T, %v, %q; want *ClusterProxyOptions, true, \"path\"", opts, subpath, key)
	}
	want := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
	if diff := cmp.Diff(want, c.ConnectMethods()); diff != "" {
		t.Errorf("ConnectMethods() (-want +got):\n%s", diff)
	}
	c.Destroy()
}

func TestConnectForwardsRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		endpointPath string
		method       string
		target       string
		body         string
		wantCode     int
		wantPath     string
		wantQuery    string
		wantLocation string // for redirects
	}{
		{
			name:      "path and query verbatim",
			method:    http.MethodGet,
			target:    "/clusters/m1/proxy/api/v1/namespaces/default/pods?labelSelector=app%3Dnginx&limit=5",
			wantCode:  http.StatusOK,
			wantPath:  "/api/v1/namespaces/default/pods",
			wantQuery: "labelSelector=app%3Dnginx&limit=5",
		},
		{
			name:         "endpoint path is kept as prefix",
			endpointPath: "/k8s/clusters/c-1",
			method:       http.MethodGet,
			target:       "/clusters/m1/proxy/api/v1/nodes",
			wantCode:     http.StatusOK,
			wantPath:     "/k8s/clusters/c-1/api/v1/nodes",
		},
		{
			name:     "trailing slash is kept",
			method:   http.MethodGet,
			target:   "/clusters/m1/proxy/apis/",
			wantCode: http.StatusOK,
			wantPath: "/apis/",
		},
		{
			name:     "body and method are forwarded",
			method:   http.MethodPost,
			target:   "/clusters/m1/proxy/api/v1/namespaces/default/configmaps?fieldManager=kubectl",
			body:     `{"kind":"ConfigMap"}`,
			wantCode: http.StatusOK,
			wantPath: "/api/v1/namespaces/default/configmaps", wantQuery: "fieldManager=kubectl",
		},
		{
			name:         "empty path redirects to the root",
			method:       http.MethodGet,
			target:       "/clusters/m1/proxy",
			wantCode:     http.StatusMovedPermanently,
			wantLocation: "/clusters/m1/proxy/",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMember(t, false, nil)
			s := newStore()
			s.addCluster("m1", m, func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint += tc.endpointPath })
			rec := do(s.connecter(), tom, tc.method, tc.target, nil, tc.body)
			if rec.Code != tc.wantCode {
				t.Fatalf("code = %d, want %d; body %s", rec.Code, tc.wantCode, rec.Body)
			}
			if tc.wantLocation != "" {
				if got := rec.Header().Get("Location"); got != tc.wantLocation {
					t.Errorf("Location = %q, want %q", got, tc.wantLocation)
				}
				return
			}
			got := m.last(t)
			u, _ := url.Parse(m.URL)
			want := recorded{method: tc.method, path: tc.wantPath, rawQuery: tc.wantQuery, host: u.Host, body: tc.body}
			got.header, got.remote = nil, ""
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(recorded{})); diff != "" {
				t.Errorf("member saw (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConnectImpersonates(t *testing.T) {
	t.Parallel()
	clientHeaders := http.Header{
		"Authorization":             {"Bearer client-token"},
		"Impersonate-User":          {"system:admin"},
		"Impersonate-Group":         {"system:masters"},
		"Impersonate-Uid":           {"0"},
		"Impersonate-Extra-Scopes":  {"all"},
		"X-Remote-User":             {"system:admin"},
		"X-Remote-Group":            {"system:masters"},
		"X-Remote-Extra-Scopes":     {"all"},
		"Proxy-Authorization":       {"Basic Zm9vOmJhcg=="},
		"Accept":                    {"application/json"},
		"X-Custom-Header-Preserved": {"yes"},
	}
	tests := []struct {
		name       string
		user       user.Info
		header     http.Header
		wantUser   string
		wantUID    []string
		wantGroups []string
		wantExtra  map[string][]string
	}{
		{
			name:       "service account with uid and extras",
			user:       tom,
			wantUser:   "system:serviceaccount:default:tom",
			wantUID:    []string{"9b6a1d1e-tom"},
			wantGroups: []string{"system:serviceaccounts", "system:serviceaccounts:default"},
			wantExtra: map[string][]string{
				"authentication.kubernetes.io/credential-id": {"JTI=abc"},
				"example.com/scopes":                         {"read", "write"},
			},
		},
		{
			name:       "client identity headers are replaced",
			user:       tom,
			header:     clientHeaders,
			wantUser:   "system:serviceaccount:default:tom",
			wantUID:    []string{"9b6a1d1e-tom"},
			wantGroups: []string{"system:serviceaccounts", "system:serviceaccounts:default"},
			wantExtra: map[string][]string{
				"authentication.kubernetes.io/credential-id": {"JTI=abc"},
				"example.com/scopes":                         {"read", "write"},
			},
		},
		{
			name:       "user without uid or extras",
			user:       &user.DefaultInfo{Name: "alice", Groups: []string{"dev", user.AllAuthenticated, user.AllUnauthenticated}},
			header:     clientHeaders,
			wantUser:   "alice",
			wantGroups: []string{"dev"},
			wantExtra:  map[string][]string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMember(t, false, nil)
			s := newStore()
			s.addCluster("m1", m, nil)
			rec := do(s.connecter(), tc.user, http.MethodGet, "/clusters/m1/proxy/api/v1/nodes", tc.header, "")
			if rec.Code != http.StatusOK {
				t.Fatalf("code = %d; body %s", rec.Code, rec.Body)
			}
			h := m.last(t).header
			if got := h.Values("Authorization"); !slices.Equal(got, []string{"Bearer imp-m1"}) {
				t.Errorf("Authorization = %q, want the impersonator token only", got)
			}
			if got := h.Values("Impersonate-User"); !slices.Equal(got, []string{tc.wantUser}) {
				t.Errorf("Impersonate-User = %q, want %q", got, tc.wantUser)
			}
			if diff := cmp.Diff(tc.wantUID, h.Values("Impersonate-Uid")); diff != "" {
				t.Errorf("Impersonate-Uid (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantGroups, h.Values("Impersonate-Group")); diff != "" {
				t.Errorf("Impersonate-Group (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantExtra, impersonatedExtra(t, h)); diff != "" {
				t.Errorf("Impersonate-Extra-* (-want +got):\n%s", diff)
			}
			for k := range h {
				if strings.HasPrefix(k, "X-Remote-") || k == "Proxy-Authorization" {
					t.Errorf("header %s reached the member", k)
				}
			}
			if tc.header != nil && h.Get("X-Custom-Header-Preserved") != "yes" {
				t.Errorf("other client headers must be forwarded; got %v", h)
			}
		})
	}
}

func TestConnectErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		user        user.Info
		cluster     string
		setup       func(s *store)
		wantCode    int32
		wantReason  metav1.StatusReason
		wantMessage string
	}{
		{
			name:        "no user",
			cluster:     "m1",
			wantCode:    500,
			wantMessage: `no user in the context of the proxy request to cluster "m1"`,
		},
		{
			name:        "cluster not found",
			user:        tom,
			cluster:     "nope",
			wantCode:    404,
			wantReason:  metav1.StatusReasonNotFound,
			wantMessage: `cluster "nope" not found`,
		},
		{
			name:    "cluster lookup fails",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.clusterErr = errors.New("etcd on fire")
			},
			wantCode:    500,
			wantMessage: "etcd on fire",
		},
		{
			name:    "cluster not ready",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.updateCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Status.Conditions[0].Status = metav1.ConditionFalse })
			},
			wantCode:    503,
			wantReason:  metav1.StatusReasonServiceUnavailable,
			wantMessage: `cluster "m1" is not ready`,
		},
		{
			name:    "cluster without Ready condition",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.updateCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Status.Conditions = nil })
			},
			wantCode:    503,
			wantMessage: `cluster "m1" is not ready`,
		},
		{
			name:    "no impersonatorSecretRef",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.updateCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.ImpersonatorSecretRef = nil })
			},
			wantCode:    503,
			wantMessage: `cluster "m1" cannot be proxied: spec.impersonatorSecretRef is not set`,
		},
		{
			name:    "impersonator secret missing",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.deleteSecret(secretNamespace, "m1-impersonator")
			},
			wantCode:    503,
			wantMessage: `cluster "m1" cannot be proxied: secret karmada-cluster/m1-impersonator (spec.impersonatorSecretRef) not found`,
		},
		{
			name:    "impersonator token empty",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.updateSecret(secretNamespace, "m1-impersonator", func(sec *corev1.Secret) { delete(sec.Data, "token") })
			},
			wantCode:    503,
			wantMessage: `cluster "m1" cannot be proxied: impersonator secret karmada-cluster/m1-impersonator has no "token" key`,
		},
		{
			name:    "secretRef secret missing",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.deleteSecret(secretNamespace, "m1")
			},
			wantCode:    503,
			wantMessage: `cluster "m1" cannot be proxied: secret karmada-cluster/m1 (spec.secretRef) not found`,
		},
		{
			name:    "caBundle is not PEM",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.updateSecret(secretNamespace, "m1", func(sec *corev1.Secret) { sec.Data["caBundle"] = []byte("garbage") })
			},
			wantCode:    503,
			wantMessage: `cluster "m1" cannot be proxied: key "caBundle" of secret karmada-cluster/m1 holds no PEM certificate`,
		},
		{
			name:    "no apiEndpoint",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.updateCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "" })
			},
			wantCode:    503,
			wantMessage: `cluster "m1" cannot be proxied: spec.apiEndpoint is not set`,
		},
		{
			name:    "unsupported proxyURL scheme",
			user:    tom,
			cluster: "m1",
			setup: func(s *store) {
				s.updateCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "ftp://proxy:21" })
			},
			wantCode:    503,
			wantMessage: `cluster "m1" cannot be proxied: spec.proxyURL "ftp://proxy:21": scheme must be http, https or socks5`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMember(t, false, nil)
			s := newStore()
			s.addCluster("m1", m, nil)
			if tc.setup != nil {
				tc.setup(s)
			}
			rec := do(s.connecter(), tc.user, http.MethodGet, "/clusters/"+tc.cluster+"/proxy/api/v1/nodes", nil, "")
			status := decodeStatus(t, rec.Body.Bytes())
			if rec.Code != int(tc.wantCode) || status.Code != tc.wantCode {
				t.Errorf("code = %d (status %d), want %d", rec.Code, status.Code, tc.wantCode)
			}
			if tc.wantReason != "" && status.Reason != tc.wantReason {
				t.Errorf("reason = %q, want %q", status.Reason, tc.wantReason)
			}
			if !strings.Contains(status.Message, tc.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", status.Message, tc.wantMessage)
			}
			if n := len(m.requests()); n != 0 {
				t.Errorf("member received %d requests, want none", n)
			}
		})
	}
}

func TestConnectVerifiesMemberCertificate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		caBundle func(t *testing.T, m *fakeMember) []byte
		insecure bool
		wantOK   bool
	}{
		{name: "caBundle signs the member", caBundle: func(_ *testing.T, m *fakeMember) []byte { return m.caPEM() }, wantOK: true},
		{name: "caBundle does not sign the member", caBundle: func(t *testing.T, _ *fakeMember) []byte { return otherCAPEM(t) }},
		{name: "wrong caBundle but insecureSkipTLSVerification", caBundle: func(t *testing.T, _ *fakeMember) []byte { return otherCAPEM(t) }, insecure: true, wantOK: true},
		{name: "no caBundle: system roots do not sign the member", caBundle: func(*testing.T, *fakeMember) []byte { return nil }},
	}
	for _, tc := range tests {
		for _, upgrade := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "", true: "/upgrade"}[upgrade], func(t *testing.T) {
				t.Parallel()
				m := newMember(t, false, membertest.UpgradeEcho)
				s := newStore()
				s.addCluster("m1", m, func(c *clusterv1alpha1.Cluster) { c.Spec.InsecureSkipTLSVerification = tc.insecure })
				s.updateSecret(secretNamespace, "m1", func(sec *corev1.Secret) { sec.Data["caBundle"] = tc.caBundle(t, m) })
				var code int
				var body string
				if upgrade {
					code, body = upgradeThrough(t, s.connecter(), "m1")
				} else {
					rec := do(s.connecter(), tom, http.MethodGet, "/clusters/m1/proxy/api/v1/nodes", nil, "")
					code, body = rec.Code, rec.Body.String()
				}
				if tc.wantOK {
					want := http.StatusOK
					if upgrade {
						want = http.StatusSwitchingProtocols
					}
					if code != want {
						t.Fatalf("code = %d, want %d; body %s", code, want, body)
					}
					return
				}
				if code < 500 || !strings.Contains(body, "certificate") {
					t.Errorf("code = %d, body %q; want a 5xx about the certificate", code, body)
				}
				if n := len(m.requests()); n != 0 {
					t.Errorf("member received %d requests over an unverified connection", n)
				}
			})
		}
	}
}
