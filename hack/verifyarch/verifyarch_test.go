// Package verifyarch tests the dependency rules (docs/architecture.md) as
// .golangci.yml writes them for depguard: each rule rejects the imports it
// forbids and lets its exceptions through. It runs golangci-lint with the
// repository's config over a throwaway module that mirrors the repository's
// paths, so the real tree is never touched. `make verify` runs it; `make
// test-unit` leaves it out so that unit tests never need the linter built.
package verifyarch

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	module = "github.com/flotilla-io/flotilla"
	// clientGo is stubbed by a local module: the throwaway module needs no
	// download.
	clientGo = "k8s.io/client-go"
)

// depguardText is the text of a depguard issue: the import, the list (rule)
// that refused it and the rule's description.
var depguardText = regexp.MustCompile(`^import '([^']+)' is not allowed from list '([^']+)'`)

func TestDependencyRules(t *testing.T) {
	lint := golangciLint(t)

	// Each case is one file of the mirror importing one package. No two
	// case folders import each other in a cycle (the module must type-check).
	cases := []struct {
		file     string // path in the mirror of the repository
		imports  string
		wantRule string // the depguard rule that refuses the import; "" when allowed
	}{
		{"apis/cluster/v1alpha1/a.go", module + "/controllers/binding", "apis"},
		{"apis/work/v1alpha2/a.go", module + "/apis/cluster/v1alpha1", ""},
		{"apis/cluster/validation/a.go", module + "/names", ""},
		{"names/a.go", module + "/selectors", "names"},

		{"controllers/manager/b.go", module + "/server", "controllers-below-processes"},
		{"controllers/detector/b_test.go", module + "/agent", "controllers-below-processes"},
		{"controllers/remedy/a.go", module + "/names", ""},
		{"agent/a.go", module + "/controllers/agentregistration", "agent"},
		{"agent/b.go", module + "/controllers/execution", ""},
		{"agent/c.go", module + "/names", ""},
		{"cli/promote/a.go", module + "/controllers/agentregistration", "cli"},
		{"charts/a.go", module + "/controllers/agentregistration", "cli"},
		{"cli/apply/a.go", module + "/names", ""},

		{"registry/cluster/a.go", module + "/controllers/scheduler", "registry"},
		{"registry/work/a.go", module + "/apis/work/v1alpha2", ""},
		{"explainapi/a.go", module + "/controllers/scheduler", "registry"},
		{"explainapi/b.go", module + "/placement", ""},

		{"proxy/a.go", module + "/controllers/execution", "proxy"},
		{"proxy/b.go", module + "/search", "proxy"},
		{"proxy/c.go", module + "/tunnel", ""},

		{"controllers/binding/a.go", module + "/controllers/detector", "controllers"},
		{"controllers/binding/b.go", module + "/controllers/internal/works", ""},
		{"controllers/binding/c.go", module + "/interpreter/lua", ""},
		{"controllers/detector/a.go", module + "/controllers/scheduler", ""},
		{"controllers/internal/works/a.go", module + "/controllers/status", "controllers"},
		{"interpreter/lua/a.go", module + "/interpreter", ""},
		{"interpreter/b.go", module + "/controllers/detector", "interpreter"},
		{"overrides/a.go", module + "/controllers/binding", "interpreter"},
		{"overrides/b.go", module + "/selectors", ""},
		{"controllers/manager/a.go", module + "/controllers/binding", ""},
		{"controllers/execution/a_test.go", module + "/controllers/status", ""},
		{"controllers/federatedhpa/a.go", module + "/podautoscaler", ""},
		{"controllers/federatedhpa/b.go", module + "/controllers/cronfederatedhpa", "controllers"},
		{"controllers/mcs/a.go", module + "/controllers/mcs/plan", ""},
		{"controllers/mcs/b.go", module + "/controllers/execution", "controllers-mcs"},
		{"controllers/mcs/plan/a.go", module + "/controllers/binding", "controllers-mcs"},

		{"member/a.go", module + "/search", "member"},
		{"member/b.go", module + "/controllers/clusterstatus", "member"},
		{"member/d.go", module + "/explainapi", "member"},
		{"member/c.go", module + "/apis/cluster/v1alpha1", ""},
		{"inprocess/a.go", module + "/registry/work", "inprocess"},
		{"inprocess/b.go", module + "/controllers/manager", "inprocess"},
		{"inprocess/c.go", module + "/apis/generated/clientset/versioned", ""},
		{"placement/a.go", clientGo + "/kubernetes", "pure-algorithms"},
		{"placement/b.go", module + "/apis/work/v1alpha2", ""},
		{"estimator/a.go", clientGo + "/rest", "pure-algorithms"},
		{"failover/a.go", clientGo + "/tools/cache", "pure-algorithms"},
		{"podautoscaler/a.go", clientGo + "/listers/core/v1", "pure-algorithms"},
		{"rolloutplan/a.go", clientGo + "/tools/cache", "pure-algorithms"},
		{"drift/a.go", clientGo + "/kubernetes", "pure-algorithms"},
		{"inventory/a.go", clientGo + "/kubernetes", "pure-algorithms"},

		{"cmd/flotillactl/a.go", module + "/controllers/agentregistration", "cmd"},
		{"cmd/flotillactl/app/a.go", module + "/cli/membership", ""},
		{"cmd/flotillactl/app/b.go", module + "/install", "cmd"},
		{"cmd/flotillactl/app/a_test.go", module + "/controllers/agentregistration", ""},
		{"cmd/flotilla-apiserver/app/a.go", module + "/server", ""},
		{"cmd/flotilla-apiserver/app/b.go", module + "/controllers/manager", "cmd"},
		{"cmd/flotilla-apiserver/app/c.go", module + "/registry", "cmd"},
		{"cmd/flotillactl/app/c.go", module + "/agent/agentconfig", ""},
		{"cmd/flotillactl/app/d.go", module + "/names", ""},

		{"server/a.go", module + "/test/env", "no-test-in-product"},
		{"search/a_test.go", module + "/test/env", ""},
		{"test/e2e/a.go", module + "/test/env", ""},
		{"hack/testbed/a.go", module + "/test/env", ""},
	}

	dir := mirror(t)
	stubbed := map[string]bool{}
	stub := func(folder string) {
		if !stubbed[folder] {
			stubbed[folder] = true
			write(t, filepath.Join(dir, folder, "doc.go"), "package "+path.Base(folder)+"\n")
		}
	}
	for _, c := range cases {
		folder := path.Dir(c.file)
		stub(folder)
		write(t, filepath.Join(dir, c.file), "package "+path.Base(folder)+"\n\nimport _ \""+c.imports+"\"\n")
		switch {
		case strings.HasPrefix(c.imports, module+"/"):
			stub(strings.TrimPrefix(c.imports, module+"/"))
		case strings.HasPrefix(c.imports, clientGo+"/"):
			stub(path.Join("_stub/client-go", strings.TrimPrefix(c.imports, clientGo+"/")))
		default:
			t.Fatalf("%s imports %s: the mirror has no stub for it", c.file, c.imports)
		}
	}

	got := run(t, lint, dir)
	for _, c := range cases {
		if got[c.file] != c.wantRule {
			t.Errorf("%s importing %s: refused by rule %q, want %q", c.file, c.imports, got[c.file], c.wantRule)
		}
		delete(got, c.file)
	}
	for file, rule := range got {
		t.Errorf("%s: unexpected depguard issue from rule %q", file, rule)
	}
}

// golangciLint returns the linter binary: $GOLANGCI_LINT (make verify sets
// it; a missing binary there fails the test) or _output/bin/golangci-lint.
func golangciLint(t *testing.T) string {
	if p := os.Getenv("GOLANGCI_LINT"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("GOLANGCI_LINT: %v", err)
		}
		return p
	}
	p, err := filepath.Abs("../../_output/bin/golangci-lint")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("golangci-lint is not built (%v): make verify builds it (hack/tools/build.sh golangci-lint)", err)
	}
	return p
}

// mirror makes the throwaway module: our module path, the repository's
// .golangci.yml, and a local stand-in for client-go.
func mirror(t *testing.T) string {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile("../../.golangci.yml")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".golangci.yml"), string(config))
	write(t, filepath.Join(dir, "go.mod"), "module "+module+"\n\ngo 1.26\n\nrequire "+clientGo+" v0.0.0\n\nreplace "+clientGo+" => ./_stub/client-go\n")
	write(t, filepath.Join(dir, "_stub/client-go/go.mod"), "module "+clientGo+"\n\ngo 1.26\n")
	return dir
}

// run lints dir with depguard's rules and returns, per file, the rule that
// refused its import. Any other issue (a type error in the mirror) fails.
func run(t *testing.T, lint, dir string) map[string]string {
	cmd := exec.Command(lint, "run", "--output.json.path=stdout", "--show-stats=false",
		"--max-issues-per-linter=0", "--max-same-issues=0", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	// golangci-lint exits 1 when it finds issues, which it must here.
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
		t.Fatalf("golangci-lint: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var report struct {
		Issues []struct {
			FromLinter string
			Text       string
			Pos        struct{ Filename string }
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("golangci-lint output: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	got := map[string]string{}
	for _, is := range report.Issues {
		m := depguardText.FindStringSubmatch(is.Text)
		if is.FromLinter != "depguard" || m == nil {
			t.Errorf("%s: %s: %s", is.Pos.Filename, is.FromLinter, is.Text)
			continue
		}
		got[filepath.ToSlash(is.Pos.Filename)] = m[2]
	}
	return got
}

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
