package pull

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/charts"
	"github.com/flotilla-io/flotilla/cli/chartapply"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// member3Installer is an installer into namespace ns of member3, which
// the test creates and deletes after.
func member3Installer(t *testing.T, ns string, out *strings.Builder) *chartapply.Installer {
	t.Helper()
	cfg, err := framework.Member(t, "member3").RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	clients, err := chartapply.NewClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	core := clients.Core
	if _, err := core.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = core.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return &chartapply.Installer{
		Clients: clients,
		Release: "flotilla-agent", Namespace: ns, DryRun: true, Out: out,
	}
}

// serverDryRun applies objs to member3 with dryRun=All and checks that
// all passed its validation and admission and that nothing was stored.
func serverDryRun(t *testing.T, in *chartapply.Installer, objs []*unstructured.Unstructured, out *strings.Builder) {
	t.Helper()
	inv, err := in.Apply(t.Context(), objs)
	if err != nil {
		t.Fatalf("server dry run: %v\n%s", err, out.String())
	}
	if len(inv.Objects) != len(objs) {
		t.Errorf("%d objects applied, %d rendered", len(inv.Objects), len(objs))
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := in.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		var res dynamic.ResourceInterface = in.Dynamic.Resource(m.Resource)
		if o.GetNamespace() != "" {
			res = in.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if _, err := res.Get(t.Context(), o.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s/%s: %v after a dry run, want NotFound", o.GetKind(), o.GetName(), err)
		}
	}
}

// Every object the agent chart renders passes a member's validation and
// admission (server-side apply with dryRun=All), with the defaults and
// with every optional object on.
func TestAgentChartServerDryRun(t *testing.T) {
	chrt, err := charts.Load(charts.AgentChart)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		values    map[string]any
		wantKinds int
	}{
		{name: "defaults", values: map[string]any{"clusterName": "member3"}, wantKinds: 1},
		{name: "everything", wantKinds: 4, values: map[string]any{
			"clusterName": "member3", "replicas": 2,
			"serviceAccount": map[string]any{"create": true, "name": "agent-dryrun"},
			"rbac":           map[string]any{"create": true, "name": "flotilla-agent-dryrun"},
			"certVolume":     map[string]any{"persistentVolumeClaim": map[string]any{"claimName": "agent-certs"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := "agent-chart-" + tc.name
			var out strings.Builder
			in := member3Installer(t, ns, &out)
			r, err := charts.Render(chrt, charts.Release{Name: "flotilla-agent", Namespace: ns, Values: tc.values}, nil)
			if err != nil {
				t.Fatalf("rendering: %v", err)
			}
			if len(r.Objects) != tc.wantKinds {
				t.Errorf("%d objects rendered, want %d", len(r.Objects), tc.wantKinds)
			}
			serverDryRun(t, in, r.Objects, &out)
		})
	}
}

// register --dry-run prints the agent's Deployment with the flags' image
// and replicas, which the member accepts (server-side dry run), and
// neither contacts the control plane nor writes to the member.
func TestRegisterDryRunPrintsDeployment(t *testing.T) {
	const ns, image = "agent-register-dryrun", "example.com/flotilla:e2e"
	var installed strings.Builder
	in := member3Installer(t, ns, &installed)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// The endpoint is never dialled in a dry run; the token is well formed
	// and unknown to the control plane.
	out, err := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"), "register", "https://127.0.0.1:1",
		"--token=dryrun.0123456789abcdef", "--discovery-token-unsafe-skip-ca-verification",
		"--cluster-name=member3-dryrun", "--kubeconfig="+framework.Member(t, "member3").Kubeconfig, "--agent-namespace="+ns,
		"--karmada-agent-image="+image, "--karmada-agent-replicas=3", "--dry-run").CombinedOutput()
	if err != nil {
		t.Fatalf("register --dry-run: %v\n%s", err, out)
	}
	docs := strings.Split(string(out), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("register --dry-run printed %d objects, want the Deployment:\n%s", len(docs)-1, out)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(docs[1]), &u.Object); err != nil {
		t.Fatalf("printed object: %v\n%s", err, docs[1])
	}
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, d, true); err != nil {
		t.Fatalf("printed Deployment: %v", err)
	}
	if d.Namespace != ns || len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("printed Deployment %s/%s with %d containers", d.Namespace, d.Name, len(d.Spec.Template.Spec.Containers))
	}
	if c := d.Spec.Template.Spec.Containers[0]; c.Image != image {
		t.Errorf("image %q, want %q", c.Image, image)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want 3", d.Spec.Replicas)
	}
	if args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--leader-elect=true") || !strings.Contains(args, "--cluster-name=member3-dryrun") {
		t.Errorf("args %q, want --leader-elect=true and --cluster-name=member3-dryrun", args)
	}

	// Nothing was written to the member, and no Cluster was made.
	if ds, err := in.Core.AppsV1().Deployments(ns).List(t.Context(), metav1.ListOptions{}); err != nil || len(ds.Items) != 0 {
		t.Errorf("deployments in %s after a dry run: %v (%v)", ns, ds, err)
	}
	if ss, err := in.Core.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{}); err != nil || len(ss.Items) != 0 {
		t.Errorf("secrets in %s after a dry run: %v (%v)", ns, ss, err)
	}
	if _, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Get(t.Context(), "member3-dryrun", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster member3-dryrun after a dry run: %v, want NotFound", err)
	}

	// The member accepts the printed Deployment.
	serverDryRun(t, in, []*unstructured.Unstructured{u}, &installed)
}
