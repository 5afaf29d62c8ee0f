// Package initialize is flotillactl init and deinit (karmadactl's): init
// renders the chart charts/flotilla built into the binary with helm's
// values (-f, --set) and applies it to the host cluster (cli/chartapply),
// then waits for its APIServices; deinit removes exactly what init
// created.
//
// It owns the flags' values and their merging, and what init prints. It
// does not own the chart (charts/) nor applying it (cli/chartapply).
package initialize
