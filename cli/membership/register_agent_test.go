package membership

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/charts"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

// argValue returns the value of --name in args, and whether it is there.
func argValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// checkAgentDeployment checks the agent Deployment register made or printed.
func checkAgentDeployment(t *testing.T, d *appsv1.Deployment, wantImage string, wantReplicas int32) {
	t.Helper()
	if d.Namespace != names.SystemNamespace || d.Name != AgentRelease {
		t.Errorf("deployment %s/%s, want %s/%s", d.Namespace, d.Name, names.SystemNamespace, AgentRelease)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != wantReplicas {
		t.Errorf("replicas %v, want %d", d.Spec.Replicas, wantReplicas)
	}
	if !createdByUs(d) {
		t.Errorf("labels %v: unregister would keep it", d.Labels)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != AgentServiceAccount {
		t.Errorf("serviceAccountName %q, want %q", pod.ServiceAccountName, AgentServiceAccount)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != wantImage {
		t.Errorf("image %q, want %q", c.Image, wantImage)
	}
	for flag, want := range map[string]string{
		"cluster-name":                    "member3",
		"leader-elect":                    map[bool]string{true: "true", false: "false"}[wantReplicas > 1],
		"leader-elect-resource-namespace": names.SystemNamespace,
		"agent-namespace":                 names.SystemNamespace,
	} {
		if got, _ := argValue(c.Args, flag); got != want {
			t.Errorf("--%s=%q, want %q", flag, got, want)
		}
	}
	var secret string
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			secret = v.Secret.SecretName
		}
	}
	if secret != names.AgentConfigSecret {
		t.Errorf("mounted Secret %q, want the one register writes, %q", secret, names.AgentConfigSecret)
	}
}

// register applies the agent's Deployment with --karmada-agent-image and
// --karmada-agent-replicas; with 0 replicas there is none (TestRegister).
func TestRegisterAgentDeployment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		image     string
		replicas  int32
		wantImage string
	}{
		{name: "defaults", replicas: 1, wantImage: "ghcr.io/flotilla-io/flotilla:0.1.0"},
		{name: "image and replicas", image: "registry.example:5000/team/flotilla:v2", replicas: 3, wantImage: "registry.example:5000/team/flotilla:v2"},
		{name: "image by digest", image: "example.com/flotilla@sha256:" + strings.Repeat("ab", 32), replicas: 2,
			wantImage: "example.com/flotilla@sha256:" + strings.Repeat("ab", 32)},
		{name: "image without a tag", image: "example.com/flotilla", replicas: 1, wantImage: "example.com/flotilla:latest"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cp := newControlPlaneFake(t, clusterInfoConfigMap(t, true))
			cp.decide = &certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}
			o := testRegisterOptions(t, cp)
			o.AgentImage, o.AgentReplicas = tc.image, tc.replicas
			member := newMember()
			var out bytes.Buffer
			if err := o.run(t.Context(), &kubeconfig{kube: member}, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			d, err := member.AppsV1().Deployments(names.SystemNamespace).Get(t.Context(), AgentRelease, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("the agent's deployment: %v\n%s", err, out.String())
			}
			checkAgentDeployment(t, d, tc.wantImage, tc.replicas)
			if len(d.ManagedFields) == 0 || d.ManagedFields[0].Manager != controlplane.UserAgent || d.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
				t.Errorf("managed fields %+v, want a server-side apply by %s", d.ManagedFields, controlplane.UserAgent)
			}
			for _, want := range []string{"member: deployment/karmada-system/flotilla-agent created", "its agent runs in the member as deployment/karmada-system/flotilla-agent"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			if strings.Contains(out.String(), "Start its agent") {
				t.Errorf("output says to start an agent process beside the Deployment:\n%s", out.String())
			}
		})
	}
}

// register --dry-run prints the Deployment with the flags' image and
// replicas, asks nothing of the control plane and writes nothing to the
// member.
func TestRegisterDryRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		image     string
		replicas  int32
		wantImage string // empty: no Deployment printed
	}{
		{name: "deployment", image: "example.com/flotilla:v3", replicas: 2, wantImage: "example.com/flotilla:v3"},
		{name: "no agent", replicas: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cp := newControlPlaneFake(t, clusterInfoConfigMap(t, true))
			o := testRegisterOptions(t, cp)
			o.AgentImage, o.AgentReplicas, o.DryRun = tc.image, tc.replicas, true
			member := newMember()
			var out bytes.Buffer
			if err := o.run(t.Context(), &kubeconfig{kube: member}, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, a := range member.Actions() {
				if a.GetVerb() != "get" && a.GetVerb() != "list" {
					t.Errorf("the member was changed: %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
			if n := len(cp.anon.Actions()) + len(cp.bootstrap.Actions()); n != 0 {
				t.Errorf("%d requests to the control plane in a dry run", n)
			}
			var deployments []*appsv1.Deployment
			for _, doc := range strings.Split(out.String(), "\n---\n")[1:] {
				d := &appsv1.Deployment{}
				if err := yaml.UnmarshalStrict([]byte(doc), d); err != nil {
					t.Fatalf("printed object: %v\n%s", err, doc)
				}
				deployments = append(deployments, d)
			}
			if tc.wantImage == "" {
				if len(deployments) != 0 {
					t.Errorf("printed %d objects with 0 replicas, want none:\n%s", len(deployments), out.String())
				}
				return
			}
			if len(deployments) != 1 || deployments[0].Kind != "Deployment" {
				t.Fatalf("printed %d objects, want the Deployment:\n%s", len(deployments), out.String())
			}
			checkAgentDeployment(t, deployments[0], tc.wantImage, tc.replicas)
		})
	}
}

// The agent chart's ClusterRole, for helm users, holds the rights register
// gives the agent.
func TestAgentChartRBACIsRegisters(t *testing.T) {
	t.Parallel()
	chrt, err := charts.Load(charts.AgentChart)
	if err != nil {
		t.Fatal(err)
	}
	r, err := charts.Render(chrt, charts.Release{Name: AgentRelease, Namespace: names.SystemNamespace, Values: map[string]any{
		"clusterName": "member3", "rbac": map[string]any{"create": true}, "serviceAccount": map[string]any{"create": true},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, obj := range r.Objects {
		kinds = append(kinds, obj.GetKind()+"/"+obj.GetName())
		if obj.GetKind() != "ClusterRole" {
			continue
		}
		role := &rbacv1.ClusterRole{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, role); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(role.Rules, agentMemberRules()) {
			t.Errorf("chart's rules %+v, register's %+v", role.Rules, agentMemberRules())
		}
	}
	slices.Sort(kinds)
	want := []string{"ClusterRole/" + AgentClusterRole, "ClusterRoleBinding/" + AgentClusterRole, "Deployment/" + AgentRelease, "ServiceAccount/" + AgentServiceAccount}
	if !slices.Equal(kinds, want) {
		t.Errorf("rendered %v, want %v (register's names)", kinds, want)
	}
}
