// Package version is flotillactl version: this binary's version, read
// from what the Go toolchain recorded in it (telemetry.VersionOf) and
// printed as karmadactl version prints it, and the control plane's.
package version
