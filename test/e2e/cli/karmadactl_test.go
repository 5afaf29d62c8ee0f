package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestKarmadactlLines: commands a karmadactl runbook greps print
// karmadactl's lines: cordon and uncordon, token list's columns, addons
// list, and errors as kubectl's.
func TestKarmadactlLines(t *testing.T) {
	t.Cleanup(func() { ctl(t, "uncordon", "member3") })
	if out := mustCtl(t, "cordon", "member3"); out != "member3 cluster cordoned\n" {
		t.Errorf("cordon printed %q, want karmadactl's %q", out, "member3 cluster cordoned\n")
	}
	if out := mustCtl(t, "cordon", "member3"); out != "member3 cluster already cordoned\n" {
		t.Errorf("cordon again printed %q", out)
	}
	if out := mustCtl(t, "uncordon", "member3"); out != "member3 cluster uncordoned\n" {
		t.Errorf("uncordon printed %q", out)
	}

	token := strings.TrimSpace(mustCtl(t, "token", "create", "--ttl=1h", "--description=karmadactl runbook"))
	t.Cleanup(func() { ctl(t, "token", "delete", token) })
	list := mustCtl(t, "token", "list")
	if lines := strings.Split(list, "\n"); strings.Join(strings.Fields(lines[0]), " ") != "TOKEN TTL EXPIRES USAGES DESCRIPTION EXTRA GROUPS" {
		t.Errorf("token list header %q, want kubeadm's (karmadactl's) columns", lines[0])
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(token) + `\s+(59m|1h)\s+\S+\s+signing,authentication\s+karmadactl runbook\s`).MatchString(list) {
		t.Errorf("token list does not list %s as karmadactl does:\n%s", token, list)
	}

	// The APIServices take a moment after the suite starts.
	framework.Eventually(t, 60*time.Second, func(context.Context) string {
		out := ctl(t, "addons", "list")
		for _, re := range []string{`(?m)^karmada-search\s+enabled\s`, `(?m)^karmada-metrics-adapter\s+enabled\s`, `(?m)^karmada-scheduler-estimator\s+built in\s`} {
			if !regexp.MustCompile(re).MatchString(out.stdout) {
				return "addons list does not match " + re + ": " + out.String()
			}
		}
		return ""
	})

	if r := ctl(t, "cordon", "member9"); !r.failed("error: ", "member9") || strings.Contains(r.stderr, "Error: ") {
		t.Errorf("cordon of an unknown cluster: want a kubectl-style error naming it: %s", r)
	}
}
