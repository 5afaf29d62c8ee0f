package clusterproxy

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

const clustersPath = "/apis/cluster.karmada.io/v1alpha1/clusters/"

// controlPlane serves the Clusters member1 (readable), secret (Forbidden),
// locked (Forbidden, and so is its proxy), down (its proxy does not
// answer) and nothing else, and pods in every cluster's proxy; it records
// the paths it was asked.
type controlPlane struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newControlPlane(t *testing.T) *controlPlane {
	cp := &controlPlane{}
	cp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cp.mu.Lock()
		cp.paths = append(cp.paths, r.URL.Path)
		cp.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		name, sub, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, clustersPath), "/")
		switch {
		case !strings.HasPrefix(r.URL.Path, clustersPath):
			if r.URL.Path == "/api/v1/namespaces/default/pods" {
				_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"on-the-control-plane"}}]}`))
				return
			}
			http.NotFound(w, r)
		case sub != "" && name == "locked":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
				"message":"clusters.cluster.karmada.io \"locked\" is forbidden: User \"tom\" cannot get resource \"clusters/proxy\""}`))
		case sub != "" && name == "down":
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503,"message":"member down does not answer"}`))
		case sub == "proxy/version":
			_, _ = w.Write([]byte(`{"major":"1","minor":"36","gitVersion":"v1.36.3"}`))
		case sub == "proxy/api/v1/namespaces/default/pods":
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"in-` + name + `"}}]}`))
		case sub != "":
			http.NotFound(w, r)
		case name == "member1", name == "down":
			_, _ = w.Write([]byte(`{"kind":"Cluster","apiVersion":"cluster.karmada.io/v1alpha1","metadata":{"name":"member1"}}`))
		case name == "secret", name == "locked":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"forbidden"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,
				"details":{"name":"` + name + `","group":"cluster.karmada.io","kind":"clusters"},"message":"clusters.cluster.karmada.io \"` + name + `\" not found"}`))
		}
	}))
	t.Cleanup(cp.Close)
	return cp
}

func (cp *controlPlane) getter() fixedConfig { return fixedConfig{&rest.Config{Host: cp.URL}} }

func (cp *controlPlane) asked() []string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]string(nil), cp.paths...)
}

// podNames lists the default namespace's pods with f's clientset.
func podNames(t *testing.T, f *Factory) []string {
	t.Helper()
	// exec and attach build REST clients straight from the configuration.
	cfg, err := f.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rest.RESTClientFor(cfg); err != nil {
		t.Fatalf("a REST client of %s: %v", cfg.Host, err)
	}
	cs, err := f.KubernetesClientSet()
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names
}

func TestFactoryUse(t *testing.T) {
	t.Parallel()
	cp := newControlPlane(t)
	f := New(cp.getter())
	if got := podNames(t, f); len(got) != 1 || got[0] != "on-the-control-plane" {
		t.Fatalf("before Use: pods %v, want the control plane's", got)
	}
	if err := f.Use(t.Context(), "member1"); err != nil {
		t.Fatal(err)
	}
	if got := podNames(t, f); len(got) != 1 || got[0] != "in-member1" || f.Cluster() != "member1" {
		t.Fatalf("after Use(member1): pods %v cluster %q, want member1's through its proxy", got, f.Cluster())
	}
	// A caller without rights on the Cluster object may still have them on
	// its proxy.
	if err := f.Use(t.Context(), "secret"); err != nil {
		t.Fatalf("Use(secret): %v, want Forbidden to pass", err)
	}
	if got := podNames(t, f); len(got) != 1 || got[0] != "in-secret" {
		t.Fatalf("after Use(secret): pods %v", got)
	}
	for cluster, want := range map[string]string{
		"member9": `cluster "member9" not found`,
		"locked":  `cluster(locked): clusters.cluster.karmada.io "locked" is forbidden: User "tom" cannot get resource "clusters/proxy"`,
		"down":    "cluster(down): member down does not answer",
	} {
		if err := f.Use(t.Context(), cluster); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Use(%s) = %v, want an error containing %q", cluster, err, want)
		}
	}
	if f.Cluster() != "secret" {
		t.Errorf("a failed Use changed the target to %q", f.Cluster())
	}
	if err := f.Use(t.Context(), ""); err != nil || f.Cluster() != "" {
		t.Fatalf("Use(\"\") = %v, cluster %q", err, f.Cluster())
	}
	if got := podNames(t, f); len(got) != 1 || got[0] != "on-the-control-plane" {
		t.Fatalf("back on the control plane: pods %v", got)
	}
}

// TestBind runs a command built over the Factory, as kubectl's are, with
// a subcommand: the flags choose the target before either runs.
func TestBind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		want    string
		wantErr string
	}{
		{args: []string{"pods"}, want: "on-the-control-plane"},
		{args: []string{"pods", "-C", "member1"}, want: "in-member1"},
		{args: []string{"pods", "sub", "--operation-scope=members", "--cluster=member1"}, want: "sub:in-member1"},
		{args: []string{"pods", "-C", "member9"}, wantErr: `cluster "member9" not found`},
		{args: []string{"pods", "-s", "members"}, wantErr: "must specify a member cluster"},
	} {
		cp := newControlPlane(t)
		f := New(cp.getter())
		var out bytes.Buffer
		list := func(prefix string) func(*cobra.Command, []string) {
			return func(*cobra.Command, []string) {
				out.WriteString(prefix + strings.Join(podNames(t, f), ","))
			}
		}
		cmd := &cobra.Command{Use: "pods", Run: list("")}
		cmd.AddCommand(&cobra.Command{Use: "sub", Run: list("sub:")})
		var flags Flags
		flags.AddScopeFlags(cmd.PersistentFlags(), genericclioptions.NewConfigFlags(true))
		Bind(cmd, f, &flags)
		root := &cobra.Command{Use: "root", SilenceUsage: true, SilenceErrors: true}
		root.AddCommand(cmd)
		root.SetArgs(tc.args)
		err := root.Execute()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: %v, want an error containing %q", tc.args, err, tc.wantErr)
			}
			if out.Len() != 0 {
				t.Errorf("%v: the command ran after an error: %s", tc.args, out.String())
			}
			continue
		}
		if err != nil || out.String() != tc.want {
			t.Errorf("%v: %q, %v; want %q (asked %v)", tc.args, out.String(), err, tc.want, cp.asked())
		}
	}
}
