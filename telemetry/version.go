package telemetry

import (
	"runtime"
	"runtime/debug"
)

// Version is a binary's version, read from what the Go toolchain recorded
// in it (the main module's version and, built from a checkout, its VCS
// revision, time and state), named as Karmada's version.Info names it:
// karmada_build_info's labels and flotillactl version print it.
type Version struct {
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// VersionOf reads bi (nil: only the Go toolchain's part is known).
func VersionOf(bi *debug.BuildInfo) Version {
	v := Version{GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return v
	}
	v.GitVersion = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.GitCommit = s.Value
		case "vcs.time":
			v.BuildDate = s.Value
		case "vcs.modified":
			v.GitTreeState = map[string]string{"true": "dirty", "false": "clean"}[s.Value]
		}
	}
	return v
}
