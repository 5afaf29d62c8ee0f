// Package race runs flotilla-apiserver built with the race detector
// through the propagation pipeline: the embedded controllers read the
// server's storage in process (informers fed by its watch) and write
// through its REST storage, so a controller that changed an object it did
// not copy, or the storage changing one a controller holds, is a data
// race the detector reports in the server's log.
package race

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// raceBinary is where TestMain builds flotilla-apiserver with -race.
func raceBinary() (string, error) {
	root, err := env.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "_output", "race", env.FlotillaComponent), nil
}

func TestMain(m *testing.M) {
	bin, err := raceBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	build := exec.CommandContext(ctx, "go", "build", "-race", "-o", bin, "./cmd/flotilla-apiserver")
	build.Dir = filepath.Dir(filepath.Dir(filepath.Dir(bin)))
	out, err := build.CombinedOutput()
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building flotilla-apiserver with -race: %v\n%s", err, out)
		os.Exit(1)
	}
	framework.Main(m, "race", env.Options{
		Members:  []env.MemberOptions{{Name: "member1"}, {Name: "member2"}},
		Flotilla: &env.FlotillaOptions{Binary: bin},
	}, "member1", "member2")
}

const manifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s, labels: {app: web}}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: %[2]s}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: %[1]s}
data: {version: %[2]q}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  - {apiVersion: v1, kind: ConfigMap, name: web-config}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: 1}
        - {targetCluster: {clusterNames: [member2]}, weight: 1}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: web-config}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      labelsOverrider: [{operator: add, value: {overridden: "yes"}}]
`

// TestPipelineWithoutDataRace propagates a Deployment and a ConfigMap,
// changes and deletes them, and fails when the race detector reported
// anything in flotilla-apiserver's log meanwhile.
func TestPipelineWithoutDataRace(t *testing.T) {
	ns := framework.Namespace(t, "race")
	members := []string{"member1", "member2"}
	for _, image := range []string{"nginx:1.27", "nginx:1.28"} {
		framework.Apply(t, fmt.Sprintf(manifest, ns, image))
		for _, m := range members {
			c := framework.MemberClient(t, m)
			framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
				d, err := c.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					return m + ": " + err.Error()
				}
				if got := d.Spec.Template.Spec.Containers[0].Image; got != image || d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
					return fmt.Sprintf("%s: Deployment with image %s and %v replicas, want %s and 2", m, got, d.Spec.Replicas, image)
				}
				cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
				if err != nil {
					return m + ": " + err.Error()
				}
				if cm.Data["version"] != image || (m == "member1") != (cm.Labels["overridden"] == "yes") {
					return fmt.Sprintf("%s: ConfigMap %v labels %v", m, cm.Data, cm.Labels)
				}
				return ""
			})
		}
	}
	hc := framework.HostClient(t)
	if err := hc.AppsV1().Deployments(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		c := framework.MemberClient(t, m)
		framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
			if _, err := c.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Sprintf("%s: the deleted Deployment: %v", m, err)
			}
			return ""
		})
	}
	log := framework.Env.Host.Process(env.FlotillaComponent).LogFile
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(data), "WARNING: DATA RACE"); i >= 0 {
		end := min(len(data), i+6000)
		t.Fatalf("the race detector reported in %s:\n%s", log, data[i:end])
	}
}
