package telemetry

import (
	"runtime/debug"

	k8smetrics "k8s.io/component-base/metrics"
)

// buildLabels are karmada_build_info's labels (Karmada's), read from the
// binary's embedded build information: the main module's version and, when
// the binary was built with VCS stamping, its commit, tree state and time.
func buildLabels(info *debug.BuildInfo, ok bool) map[string]string {
	if !ok {
		info = nil
	}
	v := VersionOf(info)
	return map[string]string{
		"git_version": v.GitVersion, "git_commit": v.GitCommit, "git_short_commit": v.GitCommit[:min(7, len(v.GitCommit))],
		"git_tree_state": v.GitTreeState, "build_date": v.BuildDate,
		"go_version": v.GoVersion, "compiler": v.Compiler, "platform": v.Platform,
	}
}

func newBuildInfo() *k8smetrics.Gauge {
	info, ok := debug.ReadBuildInfo()
	return k8smetrics.NewGauge(&k8smetrics.GaugeOpts{
		Name:           BuildInfo,
		Help:           "A metric with a constant '1' value labeled by version, revision, branch, goversion from which the program was built, and the goos and goarch for the build.",
		ConstLabels:    buildLabels(info, ok),
		StabilityLevel: k8smetrics.ALPHA,
	})
}
