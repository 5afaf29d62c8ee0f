package rollout

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// ctl runs flotillactl rollout against the control plane; it returns its
// output (stdout and stderr) and whether it exited 0.
func ctl(t *testing.T, timeout time.Duration, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"), append([]string{"rollout"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "KUBECONFIG="+framework.Env.Host.Kubeconfig, "KUBECACHEDIR="+t.TempDir())
	err := cmd.Run()
	return out.String(), err == nil
}

// mustCtl runs flotillactl rollout and wants it to succeed with want in its
// output.
func mustCtl(t *testing.T, want string, args ...string) string {
	t.Helper()
	out, ok := ctl(t, time.Minute, args...)
	if !ok || !strings.Contains(out, want) {
		t.Fatalf("flotillactl rollout %s: ok %v, want %q in:\n%s", strings.Join(args, " "), ok, want, out)
	}
	return out
}

// TestRolloutCLI: flotillactl rollout drives a rollout as kubectl rollout
// does a Deployment's: status waits and exits 0 when done and non-zero when
// halted or aborted; pause, resume and approve act on the run; history
// lists the revisions; undo rolls the previous revision back out.
func TestRolloutCLI(t *testing.T) {
	ns := setup(t, "rollout-cli", stages("    progressDeadline: 15s\n", "    before: [{type: Approval}]\n"), "nginx:1.0")
	ref := []string{"deployment/app", "-n", ns}
	with := func(args ...string) []string {
		return append(append([]string{}, args[:1]...), append(ref, args[1:]...)...)
	}

	mustCtl(t, "no rollout was started", with("status")...)
	setImage(t, ns, "nginx:2.0")
	run(t, ns, 2, 2*time.Minute, phase(flotillav1alpha1.RolloutWaitingForApproval))
	mustCtl(t, "Waiting for approval of stage s2", with("status", "--watch=false")...)

	mustCtl(t, `rolloutrun "app-deployment-2" paused`, with("pause")...)
	run(t, ns, 2, time.Minute, phase(flotillav1alpha1.RolloutPaused))
	mustCtl(t, "paused at stage s2", with("status", "--watch=false")...)
	mustCtl(t, `rolloutrun "app-deployment-2" resumed`, with("resume")...)
	run(t, ns, 2, time.Minute, phase(flotillav1alpha1.RolloutWaitingForApproval))

	mustCtl(t, `rolloutrun "app-deployment-2" approved: stage s2 (Before)`, with("approve")...)
	mustCtl(t, `rollout "app-deployment-2" successfully rolled out`, with("status", "--timeout=2m")...)
	for _, m := range members {
		waitImage(t, ns, m, "nginx:2.0", true)
	}
	out := mustCtl(t, "REVISION", with("history")...)
	var numbers []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] != "REVISION" {
			numbers = append(numbers, f[0])
		}
	}
	if strings.Join(numbers, " ") != "1 2" {
		t.Errorf("history, want revisions 1 and 2:\n%s", out)
	}
	mustCtl(t, "nginx:1.0", with("history", "--revision=1")...)

	// A change whose pods never become Ready: status exits non-zero once
	// the first stage halts.
	setImage(t, ns, env.FakeImageRegistry+"/nginx:3.0")
	run(t, ns, 3, time.Minute, func(r *flotillav1alpha1.RolloutRun) string { return "" })
	if out, ok := ctl(t, 2*time.Minute, with("status")...); ok || !strings.Contains(out, `rollout "app-deployment-3" halted at stage s1`) || !strings.Contains(out, "member1") {
		t.Errorf("status of a halting rollout: ok %v, want a failure naming member1 at stage s1:\n%s", ok, out)
	}

	// Undo: the template back to revision 2 (nginx:2.0), rolled out again
	// from the first stage, member1 first.
	mustCtl(t, "rolled back to revision 2", with("undo")...)
	waitImage(t, ns, "member1", "nginx:2.0", true)
	run(t, ns, 4, 2*time.Minute, phase(flotillav1alpha1.RolloutWaitingForApproval))

	// Abort: status says so and fails; member2 and member3 stay as they are.
	mustCtl(t, `rolloutrun "app-deployment-4" aborted`, with("abort")...)
	run(t, ns, 4, time.Minute, phase(flotillav1alpha1.RolloutAborted))
	if out, ok := ctl(t, time.Minute, with("status")...); ok || !strings.Contains(out, "was aborted") {
		t.Errorf("status of an aborted rollout: ok %v:\n%s", ok, out)
	}
	if out, ok := ctl(t, time.Minute, with("resume")...); ok || !strings.Contains(out, "is over") {
		t.Errorf("resume of an aborted rollout: ok %v, want a refusal:\n%s", ok, out)
	}
}
