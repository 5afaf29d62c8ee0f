package app

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/version"
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

// newVersionCommand returns version: this binary's version, as karmadactl
// version prints it, and the control plane's.
func newVersionCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var clientOnly bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and control plane version information",
		Example: examples(self, `
			# Print the client and control plane versions
			%[1]s version

			# Print the client version only, without contacting the control plane
			%[1]s version --client`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return fmt.Errorf("--output must be 'yaml' or 'json'")
			}
			bi, _ := debug.ReadBuildInfo()
			v := versions{ClientVersion: newClientVersion(bi)}
			var serverErr error
			if !clientOnly {
				serverErr = func() error {
					d, err := cp.config.ToDiscoveryClient()
					if err != nil {
						return err
					}
					v.ServerVersion, err = d.ServerVersion()
					return err
				}()
			}
			if err := printVersions(cmd.OutOrStdout(), self, v, output); err != nil {
				return err
			}
			if serverErr != nil {
				return fmt.Errorf("reading the control plane's version: %w", serverErr)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&output, "output", "o", "", "One of 'yaml' or 'json'.")
	return cmd
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
