// Package charts holds Flotilla's Helm charts (charts/flotilla) embedded in
// the binaries, and renders them with the Helm SDK as `helm template` does:
// one source of truth for `helm install` and `flotillactl init`.
package charts
