package metrics

import (
	"runtime"
	"runtime/debug"

	k8smetrics "k8s.io/component-base/metrics"
)

// buildLabels are karmada_build_info's labels (Karmada's), read from the
// binary's embedded build information: the main module's version and, when
// the binary was built with VCS stamping, its commit, tree state and time.
func buildLabels(info *debug.BuildInfo, ok bool) map[string]string {
	l := map[string]string{
		"git_version": "", "git_commit": "", "git_short_commit": "", "git_tree_state": "", "build_date": "",
		"go_version": runtime.Version(), "compiler": runtime.Compiler, "platform": runtime.GOOS + "/" + runtime.GOARCH,
	}
	if !ok {
		return l
	}
	l["git_version"] = info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			l["git_commit"] = s.Value
			l["git_short_commit"] = s.Value[:min(7, len(s.Value))]
		case "vcs.modified":
			l["git_tree_state"] = map[string]string{"true": "dirty", "false": "clean"}[s.Value]
		case "vcs.time":
			l["build_date"] = s.Value
		}
	}
	return l
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
