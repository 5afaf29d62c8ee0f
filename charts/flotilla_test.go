package charts

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

const (
	release   = "flotilla"
	namespace = "karmada-system"
)

// rendered is the output of one rendering, by "Kind/name" ("Kind/namespace/name" outside the release's namespace).
type rendered map[string]*unstructured.Unstructured

// render renders the embedded chart with values over its defaults, as `helm template` does.
func render(t *testing.T, values map[string]any) (rendered, error) {
	t.Helper()
	out, res, err := renderRelease(t, FlotillaChart, Release{Name: release, Namespace: namespace, Values: values})
	if err != nil {
		return nil, err
	}
	if !strings.Contains(res.Notes, "flotillactl join") {
		t.Errorf("NOTES.txt does not say how to join a member:\n%s", res.Notes)
	}
	return out, nil
}

// as converts the rendered object key into a typed object, failing the test when it is missing.
func as[T any](t *testing.T, objs rendered, key string) *T {
	t.Helper()
	u, ok := objs[key]
	if !ok {
		t.Fatalf("%s not rendered; rendered: %v", key, objs.keys())
	}
	obj := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, obj, true); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return obj
}

func (r rendered) keys() []string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

const (
	deploymentKey  = "Deployment/flotilla-apiserver"
	serviceKey     = "Service/flotilla-apiserver"
	pdbKey         = "PodDisruptionBudget/flotilla-apiserver"
	saKey          = "ServiceAccount/flotilla-apiserver"
	etcdKey        = "StatefulSet/flotilla-etcd"
	etcdServiceKey = "Service/flotilla-etcd"
)

func apiserverContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%d containers, want 1", n)
	}
	return d.Spec.Template.Spec.Containers[0]
}

// flag returns the value of --name in args and whether it is there.
func flag(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func wantFlag(t *testing.T, args []string, name, want string) {
	t.Helper()
	got, ok := flag(args, name)
	if !ok {
		t.Errorf("--%s missing from %q", name, args)
	} else if got != want {
		t.Errorf("--%s=%q, want %q", name, got, want)
	}
}

func wantNoFlag(t *testing.T, args []string, name string) {
	t.Helper()
	if v, ok := flag(args, name); ok {
		t.Errorf("--%s=%q present, want absent", name, v)
	}
}

func hasVolume(d *appsv1.Deployment, name string) *corev1.Volume {
	for i, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == name {
			return &d.Spec.Template.Spec.Volumes[i]
		}
	}
	return nil
}

func TestRenderDefaults(t *testing.T) {
	t.Parallel()
	objs, err := render(t, nil)
	if err != nil {
		t.Fatalf("rendering the defaults: %v", err)
	}

	d := as[appsv1.Deployment](t, objs, deploymentKey)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	if sc := pod.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 65532 || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("pod securityContext %+v, want runAsNonRoot with runAsUser 65532", sc)
	}
	if pod.ServiceAccountName != "flotilla-apiserver" {
		t.Errorf("serviceAccountName %q", pod.ServiceAccountName)
	}
	as[corev1.ServiceAccount](t, objs, saKey)
	aa := pod.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatalf("affinity %+v, want one preferred podAntiAffinity term", aa)
	}
	term := aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != corev1.LabelHostname {
		t.Errorf("anti-affinity topologyKey %q, want %q", term.TopologyKey, corev1.LabelHostname)
	}
	if term.LabelSelector == nil || !maps.Equal(term.LabelSelector.MatchLabels, d.Spec.Selector.MatchLabels) {
		t.Errorf("anti-affinity selector %+v, want the Deployment's %v", term.LabelSelector, d.Spec.Selector.MatchLabels)
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("pod label %s=%q, want %q (the selector's)", k, d.Spec.Template.Labels[k], v)
		}
	}

	c := apiserverContainer(t, d)
	if !slices.Equal(c.Command, []string{"/usr/local/bin/flotilla-apiserver"}) {
		t.Errorf("command %q", c.Command)
	}
	wantFlag(t, c.Args, "secure-port", "6443")
	wantFlag(t, c.Args, "service-name", "flotilla-apiserver")
	wantFlag(t, c.Args, "service-namespace", namespace)
	wantFlag(t, c.Args, "leader-elect", "true")
	wantFlag(t, c.Args, "shutdown-delay-duration", "5s")
	wantFlag(t, c.Args, "tunnel-relay-address", "$(POD_IP)")
	if len(c.Env) != 2 || c.Env[0].Name != "POD_IP" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef == nil || c.Env[0].ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("env %+v, want POD_IP from status.podIP", c.Env)
	}
	if len(c.Env) == 2 && (c.Env[1].Name != "GOMEMLIMIT" || c.Env[1].ValueFrom == nil || c.Env[1].ValueFrom.ResourceFieldRef == nil || c.Env[1].ValueFrom.ResourceFieldRef.Resource != "limits.memory") {
		t.Errorf("env %+v, want GOMEMLIMIT from the memory limit", c.Env)
	}
	wantFlag(t, c.Args, "register-apiservices", "true")
	wantNoFlag(t, c.Args, "kubeconfig")
	wantFlag(t, c.Args, "tls-cert-file", "/etc/flotilla/serving/tls.crt")
	wantFlag(t, c.Args, "tls-private-key-file", "/etc/flotilla/serving/tls.key")
	wantFlag(t, c.Args, "apiservice-ca-file", "/etc/flotilla/serving/ca.crt")
	wantFlag(t, c.Args, "metrics-bind-address", ":8080")
	wantFlag(t, c.Args, "etcd-servers", strings.Join([]string{
		"https://flotilla-etcd-0.flotilla-etcd.karmada-system.svc:2379",
		"https://flotilla-etcd-1.flotilla-etcd.karmada-system.svc:2379",
		"https://flotilla-etcd-2.flotilla-etcd.karmada-system.svc:2379",
	}, ","))
	wantFlag(t, c.Args, "etcd-cafile", "/etc/flotilla/etcd/ca.crt")
	wantFlag(t, c.Args, "etcd-certfile", "/etc/flotilla/etcd/tls.crt")
	wantFlag(t, c.Args, "etcd-keyfile", "/etc/flotilla/etcd/tls.key")
	if v := hasVolume(d, "etcd-client-cert"); v == nil || v.Secret == nil || v.Secret.SecretName != "flotilla-etcd-client-cert" {
		t.Errorf("etcd-client-cert volume %+v, want the Secret flotilla-etcd-client-cert", v)
	}
	if v := hasVolume(d, "serving-cert"); v == nil || v.Secret == nil || v.Secret.SecretName != "flotilla-apiserver-cert" {
		t.Errorf("serving-cert volume %+v, want the Secret flotilla-apiserver-cert", v)
	}
	// The chart mounts the token itself: the host may not.
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken %v, want false", pod.AutomountServiceAccountToken)
	}
	if v := hasVolume(d, "host-token"); v == nil || v.Projected == nil || len(v.Projected.Sources) != 3 || v.Projected.Sources[0].ServiceAccountToken == nil {
		t.Errorf("host-token volume %+v, want a projected ServiceAccount token, CA and namespace", v)
	}
	wantNoFlag(t, c.Args, "embedded-etcd-dir")
	if len(c.Ports) != 2 || c.Ports[0].Name != "https" || c.Ports[0].ContainerPort != 6443 || c.Ports[1].Name != "metrics" || c.Ports[1].ContainerPort != 8080 {
		t.Errorf("ports %+v, want https 6443 and metrics 8080", c.Ports)
	}
	for name, probe := range map[string]*corev1.Probe{"/readyz": c.ReadinessProbe, "/livez": c.LivenessProbe} {
		if probe == nil || probe.HTTPGet == nil {
			t.Errorf("%s: no HTTP probe", name)
			continue
		}
		if g := probe.HTTPGet; g.Path != name || g.Scheme != corev1.URISchemeHTTPS || g.Port.String() != "https" {
			t.Errorf("probe %+v, want HTTPS %s on port https", g, name)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resources %+v, want cpu and memory requests", c.Resources)
	}

	svc := as[corev1.Service](t, objs, serviceKey)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.String() != "https" {
		t.Errorf("Service ports %+v, want 443 -> https", svc.Spec.Ports)
	}
	if !maps.Equal(svc.Spec.Selector, d.Spec.Selector.MatchLabels) {
		t.Errorf("Service selector %v, want the Deployment's %v", svc.Spec.Selector, d.Spec.Selector.MatchLabels)
	}

	pdb := as[policyv1.PodDisruptionBudget](t, objs, pdbKey)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PDB minAvailable %v, want 1", pdb.Spec.MinAvailable)
	}
	if pdb.Spec.Selector == nil || !maps.Equal(pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
		t.Errorf("PDB selector %+v, want the Deployment's", pdb.Spec.Selector)
	}

	sts := as[appsv1.StatefulSet](t, objs, etcdKey)
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 3 {
		t.Errorf("etcd replicas %v, want 3", sts.Spec.Replicas)
	}
	if sts.Spec.ServiceName != "flotilla-etcd" {
		t.Errorf("etcd serviceName %q", sts.Spec.ServiceName)
	}
	wantFlag(t, sts.Spec.Template.Spec.Containers[0].Args, "initial-cluster", strings.Join([]string{
		"flotilla-etcd-0=https://flotilla-etcd-0.flotilla-etcd.karmada-system.svc:2380",
		"flotilla-etcd-1=https://flotilla-etcd-1.flotilla-etcd.karmada-system.svc:2380",
		"flotilla-etcd-2=https://flotilla-etcd-2.flotilla-etcd.karmada-system.svc:2380",
	}, ","))
	etcdArgs := sts.Spec.Template.Spec.Containers[0].Args
	for _, f := range []string{"client-cert-auth", "peer-client-cert-auth"} {
		wantFlag(t, etcdArgs, f, "true")
	}
	wantFlag(t, etcdArgs, "listen-client-urls", "https://0.0.0.0:2379")
	if len(sts.Spec.Template.Spec.Volumes) != 1 || sts.Spec.Template.Spec.Volumes[0].Secret == nil || sts.Spec.Template.Spec.Volumes[0].Secret.SecretName != "flotilla-etcd-cert" {
		t.Errorf("etcd volumes %+v, want the Secret flotilla-etcd-cert", sts.Spec.Template.Spec.Volumes)
	}
	checkCerts(t, objs)
	checkAPIServices(t, objs)
	checkRBAC(t, objs)
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Errorf("etcd volumeClaimTemplates %d, want 1", len(sts.Spec.VolumeClaimTemplates))
	}
	hs := as[corev1.Service](t, objs, etcdServiceKey)
	if hs.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("etcd Service clusterIP %q, want None (headless)", hs.Spec.ClusterIP)
	}
	if !maps.Equal(hs.Spec.Selector, sts.Spec.Selector.MatchLabels) {
		t.Errorf("etcd Service selector %v, want the StatefulSet's %v", hs.Spec.Selector, sts.Spec.Selector.MatchLabels)
	}
	if maps.Equal(sts.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
		t.Errorf("etcd and apiserver share the selector %v", d.Spec.Selector.MatchLabels)
	}
}

func TestRenderValueSets(t *testing.T) {
	t.Parallel()
	runRenderCases(t, []renderCase{{
		// values.schema.json: a misspelt key or a wrong type is refused,
		// not silently ignored.
		name:    "misspelt value fails",
		values:  map[string]any{"apiserver": map[string]any{"replica": 3}},
		wantErr: "at '/apiserver': additional properties 'replica' not allowed",
	}, {
		name:    "replicas not a number fails",
		values:  map[string]any{"apiserver": map[string]any{"replicas": "two"}},
		wantErr: "at '/apiserver/replicas': got string, want integer",
	}, {
		name:    "unknown certificate mode fails",
		values:  map[string]any{"certs": map[string]any{"mode": "vault"}},
		wantErr: "at '/certs/mode': value must be one of 'generate', 'certManager'",
	}, {
		name:    "external etcd endpoint without a scheme fails",
		values:  map[string]any{"etcd": map[string]any{"mode": "external", "external": map[string]any{"endpoints": []any{"etcd-0:2379"}}}},
		wantErr: "at '/etcd/external/endpoints/0': 'etcd-0:2379' does not match pattern",
	}, {
		name:    "embedded etcd with two replicas fails",
		values:  map[string]any{"etcd": map[string]any{"mode": "embedded"}, "apiserver": map[string]any{"replicas": 2}},
		wantErr: "etcd.mode embedded keeps the data inside one process: apiserver.replicas must be 1, got 2",
	}, {
		name:    "external etcd without endpoints fails",
		values:  map[string]any{"etcd": map[string]any{"mode": "external"}},
		wantErr: "etcd.mode external needs etcd.external.endpoints",
	}, {
		name:    "unknown etcd mode fails",
		values:  map[string]any{"etcd": map[string]any{"mode": "sqlite"}},
		wantErr: `etcd.mode must be one of bundled, external, embedded; got "sqlite"`,
	}, {
		name:   "the console in login mode",
		values: map[string]any{"console": map[string]any{"enabled": true, "port": 9000}},
		check: func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, "Deployment/flotilla-console")
			c := d.Spec.Template.Spec.Containers[0]
			if c.Command[0] != "/usr/local/bin/flotillactl" || strings.Join(c.Args, " ") != "console --login --address=0.0.0.0 --port=9000" {
				t.Errorf("console command %v %v", c.Command, c.Args)
			}
			if d.Spec.Template.Spec.ServiceAccountName != "flotilla-console" {
				t.Errorf("service account %q", d.Spec.Template.Spec.ServiceAccountName)
			}
			if _, ok := objs["ServiceAccount/flotilla-console"]; !ok {
				t.Error("no ServiceAccount of its own")
			}
			svc := as[corev1.Service](t, objs, "Service/flotilla-console")
			if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.String() != "http" {
				t.Errorf("service ports %+v", svc.Spec.Ports)
			}
			// No role binds its account: it reads as each user's token.
			for k, o := range objs {
				if strings.HasPrefix(k, "RoleBinding/") || strings.HasPrefix(k, "ClusterRoleBinding/") {
					if raw, _ := json.Marshal(o); strings.Contains(string(raw), "flotilla-console") {
						t.Errorf("%s names the console's account", k)
					}
				}
			}
		},
	}, {
		name:    "a console port out of range fails",
		values:  map[string]any{"console": map[string]any{"enabled": true, "port": 70000}},
		wantErr: "at '/console/port'",
	}, {
		name:   "embedded etcd with one replica",
		values: map[string]any{"etcd": map[string]any{"mode": "embedded", "embedded": map[string]any{"existingClaim": "flotilla-data"}}, "apiserver": map[string]any{"replicas": 1}},
		check: func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, deploymentKey)
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
				t.Errorf("replicas %v, want 1", d.Spec.Replicas)
			}
			if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
				t.Errorf("strategy %q, want Recreate", d.Spec.Strategy.Type)
			}
			args := apiserverContainer(t, d).Args
			wantFlag(t, args, "embedded-etcd-dir", "/var/lib/flotilla/etcd")
			wantFlag(t, args, "leader-elect", "false")
			wantNoFlag(t, args, "shutdown-delay-duration")
			wantNoFlag(t, args, "etcd-servers")
			if v := hasVolume(d, "data"); v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "flotilla-data" {
				t.Errorf("data volume %+v, want the claim flotilla-data", v)
			}
			for _, k := range []string{pdbKey, etcdKey, etcdServiceKey} {
				if _, ok := objs[k]; ok {
					t.Errorf("%s rendered, want none with embedded etcd and one replica", k)
				}
			}
		},
	}, {
		name: "external etcd with a client certificate",
		values: map[string]any{"etcd": map[string]any{"mode": "external", "external": map[string]any{
			"endpoints":        []any{"https://etcd-a:2379", "https://etcd-b:2379"},
			"clientCertSecret": "etcd-client",
		}}},
		check: func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, deploymentKey)
			args := apiserverContainer(t, d).Args
			wantFlag(t, args, "etcd-servers", "https://etcd-a:2379,https://etcd-b:2379")
			wantFlag(t, args, "etcd-cafile", "/etc/flotilla/etcd/ca.crt")
			wantFlag(t, args, "etcd-certfile", "/etc/flotilla/etcd/tls.crt")
			wantFlag(t, args, "etcd-keyfile", "/etc/flotilla/etcd/tls.key")
			if v := hasVolume(d, "etcd-client-cert"); v == nil || v.Secret == nil || v.Secret.SecretName != "etcd-client" {
				t.Errorf("etcd-client-cert volume %+v, want the Secret etcd-client", v)
			}
			for _, k := range []string{etcdKey, etcdServiceKey} {
				if _, ok := objs[k]; ok {
					t.Errorf("%s rendered, want none with external etcd", k)
				}
			}
		},
	}, {
		name:   "external etcd without a client certificate",
		values: map[string]any{"etcd": map[string]any{"mode": "external", "external": map[string]any{"endpoints": []any{"http://etcd:2379"}}}},
		check: func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, deploymentKey)
			args := apiserverContainer(t, d).Args
			wantFlag(t, args, "etcd-servers", "http://etcd:2379")
			wantNoFlag(t, args, "etcd-cafile")
			if v := hasVolume(d, "etcd-client-cert"); v != nil {
				t.Errorf("etcd-client-cert volume %+v, want none", v)
			}
		},
	}, {
		name: "host kubeconfig, image and extra args",
		values: map[string]any{"apiserver": map[string]any{
			"hostKubeconfigSecret": "host-kubeconfig",
			"metricsPort":          0,
			"image":                map[string]any{"repository": "example.com/flotilla", "tag": "v9", "pullPolicy": "Always"},
			"extraArgs":            []any{"--controllers=*,-foo"},
			"replicas":             3,
		}},
		check: func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, deploymentKey)
			c := apiserverContainer(t, d)
			if c.Image != "example.com/flotilla:v9" || c.ImagePullPolicy != corev1.PullAlways {
				t.Errorf("image %q %q, want example.com/flotilla:v9 Always", c.Image, c.ImagePullPolicy)
			}
			wantFlag(t, c.Args, "kubeconfig", "/etc/flotilla/host/kubeconfig")
			wantFlag(t, c.Args, "register-apiservices", "true")
			wantFlag(t, c.Args, "controllers", "*,-foo")
			wantFlag(t, c.Args, "metrics-bind-address", "0")
			if v := hasVolume(d, "host-token"); v != nil {
				t.Errorf("host-token volume %+v with a host kubeconfig, want none", v)
			}
			if v := hasVolume(d, "host-kubeconfig"); v == nil || v.Secret == nil || v.Secret.SecretName != "host-kubeconfig" {
				t.Errorf("host-kubeconfig volume %+v", v)
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
				t.Errorf("replicas %v, want 3", d.Spec.Replicas)
			}
		},
	}, {
		name:   "one replica with bundled etcd has no PodDisruptionBudget",
		values: map[string]any{"apiserver": map[string]any{"replicas": 1}, "etcd": map[string]any{"bundled": map[string]any{"replicas": 1}}},
		check: func(t *testing.T, objs rendered) {
			if _, ok := objs[pdbKey]; ok {
				t.Errorf("%s rendered with one replica", pdbKey)
			}
			wantFlag(t, apiserverContainer(t, as[appsv1.Deployment](t, objs, deploymentKey)).Args, "etcd-servers",
				"https://flotilla-etcd-0.flotilla-etcd.karmada-system.svc:2379")
		},
	}, {
		name:   "no memory limit, no GOMEMLIMIT",
		values: map[string]any{"apiserver": map[string]any{"resources": map[string]any{"limits": nil}}},
		check: func(t *testing.T, objs rendered) {
			for _, e := range apiserverContainer(t, as[appsv1.Deployment](t, objs, deploymentKey)).Env {
				if e.Name == "GOMEMLIMIT" {
					t.Errorf("GOMEMLIMIT %+v without a memory limit", e)
				}
			}
		},
	}, {
		name:   "existing ServiceAccount",
		values: map[string]any{"serviceAccount": map[string]any{"create": false, "name": "mine"}},
		check: func(t *testing.T, objs rendered) {
			if _, ok := objs[saKey]; ok {
				t.Errorf("%s rendered with serviceAccount.create false", saKey)
			}
			if got := as[appsv1.Deployment](t, objs, deploymentKey).Spec.Template.Spec.ServiceAccountName; got != "mine" {
				t.Errorf("serviceAccountName %q, want mine", got)
			}
		},
	}}, render)
}

func TestLint(t *testing.T) {
	t.Parallel()
	lintChart(t, FlotillaChart, namespace, []lintCase{
		{name: "defaults"},
		{name: "embedded", values: map[string]any{"etcd": map[string]any{"mode": "embedded"}, "apiserver": map[string]any{"replicas": 1}}},
		{name: "external", values: map[string]any{"etcd": map[string]any{"mode": "external", "external": map[string]any{"endpoints": []any{"https://etcd:2379"}}}}},
	})
}

// keyPair returns the certificate and checks the key of a kubernetes.io/tls Secret.
func keyPair(t *testing.T, objs rendered, key string) (ca *x509.CertPool, leaf *x509.Certificate, caPEM []byte) {
	t.Helper()
	s := as[corev1.Secret](t, objs, key)
	if s.Type != corev1.SecretTypeTLS {
		t.Errorf("%s: type %q, want %q", key, s.Type, corev1.SecretTypeTLS)
	}
	pair, err := tls.X509KeyPair(s.Data["tls.crt"], s.Data["tls.key"])
	if err != nil {
		t.Fatalf("%s: tls.crt and tls.key: %v", key, err)
	}
	ca = x509.NewCertPool()
	if !ca.AppendCertsFromPEM(s.Data["ca.crt"]) {
		t.Fatalf("%s: no certificate in ca.crt", key)
	}
	return ca, pair.Leaf, s.Data["ca.crt"]
}

func verify(t *testing.T, what string, leaf *x509.Certificate, ca *x509.CertPool, dns string, usage x509.ExtKeyUsage) {
	t.Helper()
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca, DNSName: dns, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		t.Errorf("%s for %q (usage %v): %v", what, dns, usage, err)
	}
}

// checkCerts checks that the generated certificates serve the names their
// clients dial and chain to the CA the clients trust.
func checkCerts(t *testing.T, objs rendered) {
	t.Helper()
	ca, leaf, _ := keyPair(t, objs, "Secret/flotilla-apiserver-cert")
	verify(t, "serving certificate", leaf, ca, "flotilla-apiserver.karmada-system.svc", x509.ExtKeyUsageServerAuth)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca, DNSName: "flotilla-apiserver.other.svc"}); err == nil {
		t.Error("serving certificate also valid for another namespace's Service")
	}
	etcdCA, server, etcdCAPEM := keyPair(t, objs, "Secret/flotilla-etcd-cert")
	for _, member := range []string{"flotilla-etcd-0", "flotilla-etcd-2"} {
		dns := member + ".flotilla-etcd.karmada-system.svc"
		verify(t, "etcd server certificate", server, etcdCA, dns, x509.ExtKeyUsageServerAuth)
		verify(t, "etcd peer certificate", server, etcdCA, dns, x509.ExtKeyUsageClientAuth)
	}
	clientCA, client, clientCAPEM := keyPair(t, objs, "Secret/flotilla-etcd-client-cert")
	if !bytes.Equal(etcdCAPEM, clientCAPEM) {
		t.Error("etcd's and flotilla-apiserver's etcd CA differ")
	}
	verify(t, "etcd client certificate", client, clientCA, "", x509.ExtKeyUsageClientAuth)
	if _, err := client.Verify(x509.VerifyOptions{Roots: ca, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("etcd client certificate chains to the serving CA: one CA per trust domain")
	}
}

// checkAPIServices checks that every APIService routes to the apiserver's
// Service on 443 and trusts the serving certificate's CA.
func checkAPIServices(t *testing.T, objs rendered) {
	t.Helper()
	_, _, caPEM := keyPair(t, objs, "Secret/flotilla-apiserver-cert")
	n := 0
	for _, k := range objs.keys() {
		if !strings.HasPrefix(k, "APIService/") {
			continue
		}
		n++
		a := as[apiregv1.APIService](t, objs, k)
		if a.Name != a.Spec.Version+"."+a.Spec.Group {
			t.Errorf("%s: name is not <version>.<group> (%s, %s)", k, a.Spec.Version, a.Spec.Group)
		}
		if s := a.Spec.Service; s == nil || s.Name != "flotilla-apiserver" || s.Namespace != namespace || s.Port == nil || *s.Port != 443 {
			t.Errorf("%s: service %+v, want %s/flotilla-apiserver:443", k, s, namespace)
		}
		if !bytes.Equal(a.Spec.CABundle, caPEM) {
			t.Errorf("%s: caBundle is not the serving CA", k)
		}
		if a.Spec.GroupPriorityMinimum != 2000 || a.Spec.VersionPriority != 10 {
			t.Errorf("%s: priorities %d/%d, want Karmada's 2000/10", k, a.Spec.GroupPriorityMinimum, a.Spec.VersionPriority)
		}
	}
	if n < 10 {
		t.Errorf("%d APIServices, want one per served group version", n)
	}
}

// checkRBAC checks the grants an aggregated server with controllers needs on the host.
func checkRBAC(t *testing.T, objs rendered) {
	t.Helper()
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "flotilla-apiserver", Namespace: namespace}
	for key, role := range map[string]string{
		"ClusterRoleBinding/flotilla-apiserver":                            "ClusterRole/flotilla-apiserver",
		"ClusterRoleBinding/flotilla-apiserver:auth-delegator":             "ClusterRole/system:auth-delegator",
		"RoleBinding/kube-system/flotilla-apiserver:authentication-reader": "Role/extension-apiserver-authentication-reader",
	} {
		u, ok := objs[key]
		if !ok {
			t.Errorf("%s not rendered", key)
			continue
		}
		var b rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if got := b.RoleRef.Kind + "/" + b.RoleRef.Name; got != role {
			t.Errorf("%s: roleRef %s, want %s", key, got, role)
		}
		if len(b.Subjects) != 1 || b.Subjects[0] != sa {
			t.Errorf("%s: subjects %+v, want %+v", key, b.Subjects, sa)
		}
	}
	as[rbacv1.ClusterRole](t, objs, "ClusterRole/flotilla-apiserver")
}

func TestRenderCertManager(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		issuer     map[string]any
		wantIssuer string
		wantCAs    bool
	}{
		{name: "chart's own CA", wantIssuer: "Issuer/flotilla-ca", wantCAs: true},
		{name: "existing issuer", issuer: map[string]any{"name": "corp", "kind": "ClusterIssuer"}, wantIssuer: "ClusterIssuer/corp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs, err := render(t, map[string]any{"certs": map[string]any{"mode": "certManager", "certManager": map[string]any{"issuerRef": tc.issuer}}})
			if err != nil {
				t.Fatalf("rendering: %v", err)
			}
			for _, k := range []string{"Secret/flotilla-apiserver-cert", "Secret/flotilla-etcd-cert", "Secret/flotilla-etcd-client-cert"} {
				if _, ok := objs[k]; ok {
					t.Errorf("%s rendered: cert-manager makes it", k)
				}
				cert, ok := objs["Certificate/"+strings.TrimPrefix(k, "Secret/")]
				if !ok {
					t.Errorf("no Certificate for %s", k)
					continue
				}
				if got, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName"); got != strings.TrimPrefix(k, "Secret/") {
					t.Errorf("%s: secretName %q", k, got)
				}
				kind, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "kind")
				name, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
				if kind+"/"+name != tc.wantIssuer {
					t.Errorf("%s: issuer %s/%s, want %s", k, kind, name, tc.wantIssuer)
				}
			}
			if _, ok := objs["Issuer/flotilla-ca"]; ok != tc.wantCAs {
				t.Errorf("chart's CA Issuer rendered %v, want %v", ok, tc.wantCAs)
			}
			a := as[apiregv1.APIService](t, objs, "APIService/v1alpha1.cluster.karmada.io")
			if len(a.Spec.CABundle) != 0 || a.Annotations["cert-manager.io/inject-ca-from"] != namespace+"/flotilla-apiserver-cert" {
				t.Errorf("APIService caBundle %d bytes, annotations %v: want the CA injected by cert-manager", len(a.Spec.CABundle), a.Annotations)
			}
		})
	}
}

// Every value of values.yaml is documented in the chart's README table.
func TestValuesDocumented(t *testing.T) {
	t.Parallel()
	// Tables whose keys are free-form (resources, nodeSelector, ...) are documented as a whole.
	checkDocumented(t, FlotillaChart, map[string]bool{"apiserver.resources": true, "apiserver.nodeSelector": true, "etcd.bundled.resources": true, "certs.certManager.issuerRef": true, "console.resources": true}, 20)
}

// The dashboard ConfigMap carries the chart's dashboard file, as valid JSON, labelled for Grafana's sidecar.
func TestDashboardConfigMap(t *testing.T) {
	objs, err := render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	cm := as[corev1.ConfigMap](t, objs, "ConfigMap/flotilla-dashboards")
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("labels %v, want grafana_dashboard=1", cm.Labels)
	}
	want, err := files.ReadFile("flotilla/dashboards/flotilla.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Data["flotilla.json"]; strings.TrimSpace(got) != strings.TrimSpace(string(want)) || !json.Valid([]byte(got)) {
		t.Errorf("flotilla.json in the ConfigMap is not the chart's dashboard (%d bytes, want %d)", len(got), len(want))
	}
	objs, err = render(t, map[string]any{"dashboards": map[string]any{"enabled": false}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := objs["ConfigMap/flotilla-dashboards"]; ok {
		t.Error("dashboard ConfigMap rendered with dashboards.enabled false")
	}
}

// TestSampleValues: the values files of samples/install render what their
// comments promise, and lint clean.
func TestSampleValues(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../samples/install/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples/install/*.yaml (%v)", err)
	}
	checks := map[string]func(t *testing.T, objs rendered){
		"console.yaml": func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, "Deployment/flotilla-console")
			if *d.Spec.Replicas != 2 || !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--login") {
				t.Errorf("console: replicas %d, args %v", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Args)
			}
		},
		"external-etcd.yaml": func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, deploymentKey)
			wantFlag(t, apiserverContainer(t, d).Args, "etcd-servers", "https://etcd-0.etcd.example:2379,https://etcd-1.etcd.example:2379,https://etcd-2.etcd.example:2379")
			if *d.Spec.Replicas != 3 {
				t.Errorf("replicas %d, want 3", *d.Spec.Replicas)
			}
			if _, ok := objs["StatefulSet/flotilla-etcd"]; ok {
				t.Error("the bundled etcd is rendered too")
			}
		},
		"cert-manager.yaml": func(t *testing.T, objs rendered) {
			n := 0
			for k, o := range objs {
				if strings.HasPrefix(k, "Certificate/") {
					n++
					if ref, _, _ := unstructured.NestedString(o.Object, "spec", "issuerRef", "name"); ref != "platform-ca" {
						t.Errorf("%s is issued by %q, want platform-ca", k, ref)
					}
				}
			}
			if n == 0 {
				t.Error("no Certificate rendered")
			}
		},
		"single-replica.yaml": func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, deploymentKey)
			wantFlag(t, apiserverContainer(t, d).Args, "embedded-etcd-dir", "/var/lib/flotilla/etcd")
			if v := hasVolume(d, "data"); v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "flotilla-data" {
				t.Errorf("data volume %+v, want the claim flotilla-data", v)
			}
		},
	}
	var renders []renderCase
	var lints []lintCase
	for _, f := range files {
		vals, err := chartutil.ReadValuesFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		check, ok := checks[filepath.Base(f)]
		if !ok {
			t.Errorf("%s: no check of what it renders", f)
			continue
		}
		renders = append(renders, renderCase{name: filepath.Base(f), values: vals, check: check})
		lints = append(lints, lintCase{name: "lint " + filepath.Base(f), values: vals})
	}
	runRenderCases(t, renders, render)
	lintChart(t, FlotillaChart, namespace, lints)
}
