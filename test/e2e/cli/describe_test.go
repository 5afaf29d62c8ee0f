package cli

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDescribeAcrossClusters: flotillactl describe runs kubectl's
// describers in the members, each description headed with its cluster;
// a member without the object is named in a warning.
func TestDescribeAcrossClusters(t *testing.T) {
	bed := newGetBed(t, "cli-describe")
	ns := bed.ns

	out, errOut := getMustRun(t, "", "describe", "deployment", "web", "-n", ns, "-C", "member1")
	t.Logf("describe deployment web -C member1:\n%s", out)
	for _, want := range []string{`^Cluster: +member1\n`, `\nName: +web\n`, `\nNamespace: +` + ns + `\n`, `karmada\.io/managed=true`, `\nReplicas: +1 desired`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("describe deployment web -C member1: no %s in\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}
	// karmadactl's spelling.
	out2, _ := getMustRun(t, "", "describe", "deployment/web", "-n", ns, "--operation-scope=members", "--cluster=member1")
	if !strings.HasPrefix(out2, "Cluster:") || !strings.Contains(out2, "member1") || strings.Contains(out2, "member2") {
		t.Errorf("describe --operation-scope=members --cluster=member1:\n%s", out2)
	}

	out, errOut = getMustRun(t, "", "describe", "deployment", "web", "-n", ns, "--operation-scope=all")
	var clusters []string
	for _, m := range regexp.MustCompile(`(?m)^Cluster: +(\S+)$`).FindAllStringSubmatch(out, -1) {
		clusters = append(clusters, m[1])
	}
	if !slices.Equal(clusters, []string{"Karmada", "member1", "member2"}) {
		t.Errorf("describe --operation-scope=all: descriptions of %v, want Karmada, member1, member2:\n%s", clusters, out)
	}
	if !strings.Contains(errOut, "warning: cluster member3 skipped: NotFound") {
		t.Errorf("stderr %q, want member3 named as not having web", errOut)
	}

	// The control plane alone: kubectl's output, no Cluster line.
	out, _ = getMustRun(t, "", "describe", "deployment", "web", "-n", ns)
	if !strings.HasPrefix(out, "Name:") {
		t.Errorf("describe in the control plane:\n%s", out)
	}
}
