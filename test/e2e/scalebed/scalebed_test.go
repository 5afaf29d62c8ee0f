// Package scalebed checks the scale bed: twenty trimmed members start, join
// the control plane in push mode and become Ready, each receives the
// Deployment one PropagationPolicy places on all of them, and stopping the
// environment leaves none of its processes behind.
package scalebed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// members is the size of the bed.
const members = 20

func TestMain(m *testing.M) {
	framework.Main(m, "scalebed", env.Options{
		Members:  env.TrimmedMembers(1, members),
		Flotilla: &env.FlotillaOptions{},
	})
}

// TestScaleBed runs its steps in order, as one test: the last one stops
// the environment the others use.
func TestScaleBed(t *testing.T) {
	names := make([]string, members)
	for i := range names {
		names[i] = env.MemberName(i + 1)
	}
	joined := t.Run("every member joins and its Cluster is Ready", func(t *testing.T) {
		start := time.Now()
		if err := framework.Env.JoinAll(t.Context(), names); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d members joined in %.1f s", members, time.Since(start).Seconds())
		if err := framework.Env.WaitClustersReady(t.Context(), names, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d Clusters Ready %.1f s after the first join", members, time.Since(start).Seconds())
	})
	if joined {
		t.Run("a Deployment propagates to every member", func(t *testing.T) { deploymentInEveryMember(t, names) })
	}
	t.Run("stopping leaves no process", stopLeavesNoProcess)
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [%[2]s]}}
`

// deploymentInEveryMember: a trimmed member runs no Pods, so the object
// being there is what counts.
func deploymentInEveryMember(t *testing.T, names []string) {
	ns := framework.Namespace(t, "scalebed-web")
	start := time.Now()
	framework.Apply(t, fmt.Sprintf(deployment, ns, strings.Join(names, ", ")))
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		var missing []string
		for _, m := range names {
			_, err := framework.MemberClient(t, m).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				missing = append(missing, m)
			case err != nil:
				return m + ": " + err.Error()
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("Deployment %s/web is missing from %v", ns, missing)
		}
		return ""
	})
	t.Logf("Deployment in all %d members %.1f s after it was applied", len(names), time.Since(start).Seconds())
}

// stopLeavesNoProcess stops the environment and checks, for every process
// it recorded, that its process group is empty (each runs in a group of its
// own, so a child it left would count too).
func stopLeavesNoProcess(t *testing.T) {
	e := framework.Env
	procs := []*env.Process{e.Etcd}
	for _, c := range e.Clusters() {
		procs = append(procs, c.Processes...)
	}
	// etcd; the host's kube-apiserver, kube-controller-manager and
	// flotilla-apiserver; each member's kube-apiserver,
	// kube-controller-manager and kwok.
	if want := 1 + 3 + 3*members; len(procs) != want {
		t.Errorf("the environment recorded %d processes, want %d", len(procs), want)
	}
	for _, p := range procs {
		if err := syscall.Kill(-p.PID, 0); err != nil {
			t.Errorf("%s/%s (pid %d) is not running before the stop: %v", p.Cluster, p.Component, p.PID, err)
		}
	}
	start := time.Now()
	e.Stop(0)
	t.Logf("%d processes stopped in %.1f s", len(procs), time.Since(start).Seconds())
	for _, p := range procs {
		if err := syscall.Kill(-p.PID, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s/%s: process group %d still has a process after Stop (kill 0: %v)", p.Cluster, p.Component, p.PID, err)
		}
	}
}
