// Package chartapply applies a rendered chart to a cluster with
// server-side apply, as `flotillactl init` does, remembers what it created
// in an inventory (a ConfigMap), deletes what a later apply no longer
// renders, waits for the APIServices it made to become Available, and
// removes exactly what it created (`flotillactl deinit`).
//
// It does not render the chart (charts/) nor own init's flags and values
// (cli/initialize).
package chartapply
