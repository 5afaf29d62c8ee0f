package version

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/version"
)

func TestClientVersion(t *testing.T) {
	t.Parallel()
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	v := newClientVersion(bi)
	if v.GitVersion != "v1.2.3" || v.GitCommit != "abc123" || v.BuildDate != "2026-01-02T03:04:05Z" || v.GitTreeState != "dirty" || v.GoVersion == "" || v.Platform == "" {
		t.Errorf("newClientVersion = %+v", v)
	}
	if v := newClientVersion(nil); v.GitVersion != "" || v.Compiler == "" {
		t.Errorf("newClientVersion(nil) = %+v", v)
	}

	vs := versions{ClientVersion: clientVersion{GitVersion: "v1.2.3", GoVersion: "go1.26", Compiler: "gc", Platform: "linux/amd64"},
		ServerVersion: &version.Info{GitVersion: "v1.36.3"}}
	var out bytes.Buffer
	if err := printVersions(&out, "kubectl flotilla", vs, ""); err != nil {
		t.Fatal(err)
	}
	want := `kubectl flotilla version: version.Info{GitVersion:"v1.2.3", GitCommit:"", GitTreeState:"", BuildDate:"", GoVersion:"go1.26", Compiler:"gc", Platform:"linux/amd64"}
Server Version: v1.36.3
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	out.Reset()
	if err := printVersions(&out, "flotillactl", vs, "json"); err != nil {
		t.Fatal(err)
	}
	var back versions
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.ServerVersion == nil || back.ServerVersion.GitVersion != "v1.36.3" || back.ClientVersion.GitVersion != "v1.2.3" {
		t.Errorf("json %s: %+v %v", out.String(), back, err)
	}
}
