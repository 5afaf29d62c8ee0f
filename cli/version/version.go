package version

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/telemetry"
)

// clientVersion is karmadactl's version.Info of this binary.
type clientVersion telemetry.Version

// String prints the version as karmadactl does (Go syntax of version.Info).
func (v clientVersion) String() string {
	return fmt.Sprintf("version.Info{GitVersion:%q, GitCommit:%q, GitTreeState:%q, BuildDate:%q, GoVersion:%q, Compiler:%q, Platform:%q}",
		v.GitVersion, v.GitCommit, v.GitTreeState, v.BuildDate, v.GoVersion, v.Compiler, v.Platform)
}

// newClientVersion reads the version from what the Go toolchain recorded
// in the binary.
func newClientVersion(bi *debug.BuildInfo) clientVersion {
	return clientVersion(telemetry.VersionOf(bi))
}

// versions is what -o json|yaml prints, kubectl version's shape.
type versions struct {
	ClientVersion clientVersion `json:"clientVersion"`
	ServerVersion *version.Info `json:"serverVersion,omitempty"`
}

// Run prints this binary's version, as karmadactl version prints it,
// and, unless clientOnly, the version of the control plane flags locates;
// output is "" (text), json or yaml. self is how the user runs this
// binary, which names the client's line.
func Run(flags genericclioptions.RESTClientGetter, self string, clientOnly bool, output string, out io.Writer) error {
	if output != "" && output != "json" && output != "yaml" {
		return fmt.Errorf("--output must be 'yaml' or 'json'")
	}
	bi, _ := debug.ReadBuildInfo()
	v := versions{ClientVersion: newClientVersion(bi)}
	var serverErr error
	if !clientOnly {
		serverErr = func() error {
			d, err := flags.ToDiscoveryClient()
			if err != nil {
				return err
			}
			v.ServerVersion, err = d.ServerVersion()
			return err
		}()
	}
	if err := printVersions(out, self, v, output); err != nil {
		return err
	}
	if serverErr != nil {
		return fmt.Errorf("reading the control plane's version: %w", serverErr)
	}
	return nil
}

// printVersions prints karmadactl's line for the client and kubectl's for
// the control plane, or both as JSON or YAML.
func printVersions(out io.Writer, self string, v versions, output string) error {
	switch output {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	if _, err := fmt.Fprintf(out, "%s version: %s\n", self, v.ClientVersion); err != nil {
		return err
	}
	if v.ServerVersion != nil {
		_, err := fmt.Fprintf(out, "Server Version: %s\n", v.ServerVersion.GitVersion)
		return err
	}
	return nil
}
