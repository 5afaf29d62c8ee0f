// Package install applies a rendered chart to a cluster with server-side
// apply, as `flotillactl init` does, remembers what it created in an
// inventory, waits for the APIServices it made to become Available, and
// removes exactly what it created (`flotillactl deinit`).
package install
