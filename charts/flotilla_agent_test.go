package charts

import (
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/flotilla-io/flotilla/names"
)

const (
	agentRelease       = "flotilla-agent"
	agentDeploymentKey = "Deployment/flotilla-agent"
	agentCluster       = "member3"
)

// renderAgent renders the agent chart with clusterName set and values over
// its defaults, in names.SystemNamespace.
func renderAgent(t *testing.T, values map[string]any) (rendered, error) {
	t.Helper()
	vals := map[string]any{"clusterName": agentCluster}
	maps.Copy(vals, values)
	out, _, err := renderRelease(t, AgentChart, Release{Name: agentRelease, Namespace: names.SystemNamespace, Values: vals})
	for key, u := range out {
		if strings.Count(key, "/") > 1 && namespaced(u) {
			t.Errorf("%s outside the release's namespace", key)
		}
	}
	return out, err
}

func agentContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%d containers, want 1", n)
	}
	return d.Spec.Template.Spec.Containers[0]
}

// mountOf returns the container's mount of the volume name.
func mountOf(c corev1.Container, name string) *corev1.VolumeMount {
	for i, m := range c.VolumeMounts {
		if m.Name == name {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

// The defaults (with the required clusterName) render the Deployment
// register applies, and nothing register already creates.
func TestAgentRenderDefaults(t *testing.T) {
	t.Parallel()
	objs, err := renderAgent(t, nil)
	if err != nil {
		t.Fatalf("rendering the defaults: %v", err)
	}
	if keys := objs.keys(); !slices.Equal(keys, []string{agentDeploymentKey}) {
		t.Errorf("rendered %v, want only %s (register creates the Secret, ServiceAccount and RBAC)", keys, agentDeploymentKey)
	}
	d := as[appsv1.Deployment](t, objs, agentDeploymentKey)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas %v, want 1", d.Spec.Replicas)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy %q, want Recreate: one agent without leader election is never run twice", d.Spec.Strategy.Type)
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("pod label %s=%q, want %q (the selector's)", k, d.Spec.Template.Labels[k], v)
		}
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != "karmada-agent-sa" {
		t.Errorf("serviceAccountName %q, want register's karmada-agent-sa", pod.ServiceAccountName)
	}
	if pod.AutomountServiceAccountToken != nil {
		t.Errorf("automountServiceAccountToken %v, want the member's default (the agent reaches its member in-cluster)", *pod.AutomountServiceAccountToken)
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 65532 || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("pod securityContext %+v, want runAsNonRoot with runAsUser 65532", sc)
	}
	if pod.Affinity != nil {
		t.Errorf("affinity %+v with one replica, want none", pod.Affinity)
	}

	c := agentContainer(t, d)
	if c.Image != "ghcr.io/flotilla-io/flotilla:0.1.0" {
		t.Errorf("image %q, want the chart's appVersion", c.Image)
	}
	if !slices.Equal(c.Command, []string{"/usr/local/bin/flotilla-agent"}) {
		t.Errorf("command %q", c.Command)
	}
	wantFlag(t, c.Args, "cluster-name", agentCluster)
	wantFlag(t, c.Args, "leader-elect", "false")
	wantFlag(t, c.Args, "leader-elect-resource-namespace", names.SystemNamespace)
	wantFlag(t, c.Args, "agent-namespace", names.SystemNamespace)
	wantFlag(t, c.Args, "metrics-bind-address", ":8080")
	wantNoFlag(t, c.Args, "member-kubeconfig")

	// --control-plane-kubeconfig is register's Secret, key and all.
	cp, _ := flag(c.Args, "control-plane-kubeconfig")
	if path.Base(cp) != names.AgentConfigKey {
		t.Errorf("--control-plane-kubeconfig=%q, want the file %s", cp, names.AgentConfigKey)
	}
	v := hasVolume(d, "control-plane-kubeconfig")
	if v == nil || v.Secret == nil || v.Secret.SecretName != names.AgentConfigSecret {
		t.Fatalf("control-plane-kubeconfig volume %+v, want the Secret %s", v, names.AgentConfigSecret)
	}
	if items := v.Secret.Items; len(items) != 1 || items[0].Key != names.AgentConfigKey || items[0].Path != names.AgentConfigKey {
		t.Errorf("Secret items %+v, want key %s", items, names.AgentConfigKey)
	}
	if m := mountOf(c, "control-plane-kubeconfig"); m == nil || m.MountPath != path.Dir(cp) || !m.ReadOnly {
		t.Errorf("control-plane-kubeconfig mount %+v, want %s read-only", m, path.Dir(cp))
	}

	// --cert-dir is on its own writable volume, an emptyDir by default.
	certDir, _ := flag(c.Args, "cert-dir")
	if m := mountOf(c, "certs"); m == nil || m.MountPath != certDir || m.ReadOnly {
		t.Errorf("certs mount %+v, want %q writable", m, certDir)
	}
	if v := hasVolume(d, "certs"); v == nil || v.EmptyDir == nil {
		t.Errorf("certs volume %+v, want an emptyDir", v)
	}

	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("ports %+v, want metrics 8080", c.Ports)
	}
	if c.ReadinessProbe != nil || c.LivenessProbe != nil {
		t.Errorf("probes %+v %+v: flotilla-agent serves no health endpoint", c.ReadinessProbe, c.LivenessProbe)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container securityContext %+v, want a read-only root and no privilege escalation", sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resources %+v, want cpu and memory requests", c.Resources)
	}
}

func TestAgentRenderValueSets(t *testing.T) {
	t.Parallel()
	runRenderCases(t, []renderCase{{
		name:    "no cluster name fails",
		values:  map[string]any{"clusterName": ""},
		wantErr: "clusterName is required",
	}, {
		name:    "negative replicas fail",
		values:  map[string]any{"replicas": -1},
		wantErr: "replicas must not be negative, got -1",
	}, {
		name:    "no Secret fails",
		values:  map[string]any{"controlPlaneKubeconfigSecret": ""},
		wantErr: "controlPlaneKubeconfigSecret is required",
	}, {
		name:   "replicas elect a leader",
		values: map[string]any{"replicas": 3},
		check: func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, agentDeploymentKey)
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
				t.Errorf("replicas %v, want 3", d.Spec.Replicas)
			}
			if d.Spec.Strategy.Type != "" {
				t.Errorf("strategy %q, want the default rolling update", d.Spec.Strategy.Type)
			}
			wantFlag(t, agentContainer(t, d).Args, "leader-elect", "true")
			aa := d.Spec.Template.Spec.Affinity
			if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
				t.Fatalf("affinity %+v, want one preferred podAntiAffinity term", aa)
			}
			if sel := aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector; sel == nil || !maps.Equal(sel.MatchLabels, d.Spec.Selector.MatchLabels) {
				t.Errorf("anti-affinity selector %+v, want the Deployment's", sel)
			}
		},
	}, {
		name:   "image by digest",
		values: map[string]any{"image": map[string]any{"repository": "example.com/flotilla", "tag": "sha256:" + strings.Repeat("0f", 32)}},
		check: func(t *testing.T, objs rendered) {
			c := agentContainer(t, as[appsv1.Deployment](t, objs, agentDeploymentKey))
			if want := "example.com/flotilla@sha256:" + strings.Repeat("0f", 32); c.Image != want {
				t.Errorf("image %q, want %q", c.Image, want)
			}
		},
	}, {
		name:   "zero replicas",
		values: map[string]any{"replicas": 0},
		check: func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, agentDeploymentKey)
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
				t.Errorf("replicas %v, want 0", d.Spec.Replicas)
			}
		},
	}, {
		name: "image, metrics off, extra args, secret, volume, placement",
		values: map[string]any{
			"image":                        map[string]any{"repository": "example.com/flotilla", "tag": "v9", "pullPolicy": "Always"},
			"metricsPort":                  0,
			"extraArgs":                    []any{"--cluster-status-update-frequency=20s"},
			"controlPlaneKubeconfigSecret": "my-agent-config",
			"certVolume":                   map[string]any{"persistentVolumeClaim": map[string]any{"claimName": "agent-certs"}},
			"nodeSelector":                 map[string]any{"kubernetes.io/os": "linux"},
			"tolerations":                  []any{map[string]any{"key": "dedicated", "operator": "Exists"}},
		},
		check: func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, agentDeploymentKey)
			c := agentContainer(t, d)
			if c.Image != "example.com/flotilla:v9" || c.ImagePullPolicy != corev1.PullAlways {
				t.Errorf("image %q pull %q", c.Image, c.ImagePullPolicy)
			}
			wantFlag(t, c.Args, "metrics-bind-address", "0")
			if len(c.Ports) != 0 {
				t.Errorf("ports %+v with metrics off, want none", c.Ports)
			}
			wantFlag(t, c.Args, "cluster-status-update-frequency", "20s")
			if v := hasVolume(d, "control-plane-kubeconfig"); v == nil || v.Secret == nil || v.Secret.SecretName != "my-agent-config" {
				t.Errorf("control-plane-kubeconfig volume %+v, want the Secret my-agent-config", v)
			}
			if v := hasVolume(d, "certs"); v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "agent-certs" || v.EmptyDir != nil {
				t.Errorf("certs volume %+v, want the claim agent-certs alone", v)
			}
			pod := d.Spec.Template.Spec
			if pod.NodeSelector["kubernetes.io/os"] != "linux" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "dedicated" {
				t.Errorf("nodeSelector %v tolerations %+v", pod.NodeSelector, pod.Tolerations)
			}
		},
	}, {
		name:   "ServiceAccount and RBAC from the chart",
		values: map[string]any{"serviceAccount": map[string]any{"create": true, "name": "agent"}, "rbac": map[string]any{"create": true, "name": "agent-role"}},
		check: func(t *testing.T, objs rendered) {
			d := as[appsv1.Deployment](t, objs, agentDeploymentKey)
			if d.Spec.Template.Spec.ServiceAccountName != "agent" {
				t.Errorf("serviceAccountName %q, want agent", d.Spec.Template.Spec.ServiceAccountName)
			}
			as[corev1.ServiceAccount](t, objs, "ServiceAccount/agent")
			role := as[rbacv1.ClusterRole](t, objs, "ClusterRole/agent-role")
			if len(role.Rules) == 0 || !slices.Equal(role.Rules[0].Verbs, []string{rbacv1.VerbAll}) {
				t.Errorf("ClusterRole rules %+v, want every right first", role.Rules)
			}
			b := as[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding/agent-role")
			want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "agent", Namespace: names.SystemNamespace}
			if b.RoleRef.Name != "agent-role" || len(b.Subjects) != 1 || b.Subjects[0] != want {
				t.Errorf("binding roleRef %+v subjects %+v, want agent-role to %+v", b.RoleRef, b.Subjects, want)
			}
		},
	}}, renderAgent)
}

func TestAgentLint(t *testing.T) {
	t.Parallel()
	lintChart(t, AgentChart, names.SystemNamespace, []lintCase{
		{name: "cluster name", values: map[string]any{"clusterName": agentCluster}},
		{name: "replicas and RBAC", values: map[string]any{"clusterName": agentCluster, "replicas": 2, "serviceAccount": map[string]any{"create": true}, "rbac": map[string]any{"create": true}}},
	})
}

// undocumented returns the values of c missing from its README's table;
// the values of whole (free-form maps) are documented as one.
func undocumented(t *testing.T, c *chart.Chart, whole map[string]bool) (missing []string, walked int) {
	t.Helper()
	var readme string
	for _, f := range c.Files {
		if f.Name == "README.md" {
			readme = string(f.Data)
		}
	}
	if readme == "" {
		t.Fatal("no README.md in the chart")
	}
	var walk func(prefix string, v map[string]any)
	walk = func(prefix string, v map[string]any) {
		for k, val := range v {
			p := prefix + k
			if m, ok := val.(map[string]any); ok && len(m) > 0 && !whole[p] {
				walk(p+".", m)
				continue
			}
			walked++
			if !strings.Contains(readme, "| `"+p+"` |") {
				missing = append(missing, p)
			}
		}
	}
	walk("", c.Values)
	slices.Sort(missing)
	return missing, walked
}

// Every value of the agent chart's values.yaml is in its README's table.
func TestAgentValuesDocumented(t *testing.T) {
	t.Parallel()
	checkDocumented(t, AgentChart, map[string]bool{"resources": true, "nodeSelector": true, "certVolume": true}, 15)
}
