package drift

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/drifted"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// flotillactl runs flotillactl and fails the test when it fails.
func flotillactl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := framework.Flotillactl(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDriftCommands: an image changed in member2 under ReportOnly is
// listed by flotillactl drift (a row naming member2, the path and Open;
// -o yaml with both values; -C member1 lists nothing) and shown in
// flotillactl get -o wide's DRIFT column (Open in member2, No in member1).
func TestDriftCommands(t *testing.T) {
	const name = "cli-web"
	propagated(t, "Deployment", name, "nginx:1.27", map[string]string{flotillav1alpha1.ApplyModeAnnotation: string(flotillav1alpha1.ApplyReportOnly)}, "member1", "member2")
	applied(t, "Deployment", name, "member1", "member2")
	setImage(t, "member2", name, "nginx:9.9")
	edit := []workv1alpha1.DriftedField{{Path: imagePath, ValueInMember: `"nginx:9.9"`, ValueApplied: `"nginx:1.27"`}}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		return workSays(ctx, t, "member2", "Deployment", name, workv1alpha1.WorkDrifted, metav1.ConditionTrue, workv1alpha1.WorkDriftDetectedReason, edit)
	})

	table := flotillactl(t, "drift", "-n", ns)
	row := regexp.MustCompile(`(?m)^member2 +Deployment +` + name + ` +Open +` + regexp.QuoteMeta(imagePath) + ` +\S+$`)
	if !strings.HasPrefix(table, "CLUSTER ") || !row.MatchString(table) || strings.Contains(table, "member1 ") {
		t.Errorf("flotillactl drift:\n%s\nwant a header and one row: member2 Deployment %s Open %s <age>", table, name, imagePath)
	}
	var entries []drifted.Entry
	if err := yaml.Unmarshal([]byte(flotillactl(t, "drift", "-A", "-C", "member2", "-o", "yaml")), &entries); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.Name == name {
			found = true
			if e.Cluster != "member2" || e.Kind != "Deployment" || e.Namespace != ns || e.State != drifted.Open || fmt.Sprint(e.Fields) != fmt.Sprint(edit) {
				t.Errorf("flotillactl drift -o yaml: %+v; want member2's Open drift %+v", e, edit)
			}
		}
	}
	if !found {
		t.Errorf("flotillactl drift -A -C member2 -o yaml lists no %s: %+v", name, entries)
	}
	if out := flotillactl(t, "drift", "-n", ns, "-C", "member1", "-o", "yaml"); strings.Contains(out, name) {
		t.Errorf("flotillactl drift -C member1 lists member2's drift:\n%s", out)
	}

	wide := flotillactl(t, "get", "deployment", name, "-n", ns, "-C", "member1,member2", "-o", "wide")
	for cluster, cell := range map[string]string{"member1": "No", "member2": "Open"} {
		if !regexp.MustCompile(`(?m)^` + name + ` +` + cluster + ` .* Y +` + cell + `$`).MatchString(wide) {
			t.Errorf("flotillactl get -o wide:\n%s\nwant %s's row ending in ADOPTION Y, DRIFT %s", wide, cluster, cell)
		}
	}
	if !regexp.MustCompile(`(?m)^NAME +CLUSTER .* ADOPTION +DRIFT$`).MatchString(wide) {
		t.Errorf("flotillactl get -o wide:\n%s\nwant DRIFT after ADOPTION", wide)
	}

	// --watch too: the first rows, and the row of a later event in
	// member2 (another edit, still Open).
	watched := watchFor(t, 6*time.Second, func() { setImage(t, "member2", name, "nginx:9.8") },
		"get", "deployment", name, "-n", ns, "-C", "member1,member2", "-o", "wide", "--watch")
	if n := len(regexp.MustCompile(`(?m)^`+name+` +member2 .* Y +Open$`).FindAllString(watched, -1)); n < 2 ||
		!regexp.MustCompile(`(?m)^`+name+` +member1 .* Y +No$`).MatchString(watched) {
		t.Errorf("flotillactl get -o wide --watch:\n%s\nwant member1's row with DRIFT No, and member2's first row and event row (%d) with DRIFT Open", watched, n)
	}
}

// watchFor runs flotillactl with args (a watch) for d, calling during a
// second after it starts, and returns what it printed.
func watchFor(t *testing.T, d time.Duration, during func(), args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, "flotillactl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+framework.Env.Host.Kubeconfig, "KUBECACHEDIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	during()
	_ = cmd.Wait() // ended by the timeout: the watch runs until stopped
	return out.String()
}
