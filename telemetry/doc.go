// Package telemetry is what Flotilla's processes report about themselves:
// their events (NewEventRecorder), their build (VersionOf) and their
// metrics. It declares the Prometheus metrics of flotilla-apiserver and
// flotilla-agent that Karmada's components also export, under Karmada's
// names, labels and types, so that dashboards and alerts written for
// Karmada work unchanged: the cluster gauges, the propagation pipeline's
// durations and counters, the scheduler's, the autoscalers' and
// karmada_build_info. It registers them in component-base's legacyregistry,
// with the workqueue metrics and the Go runtime and process collectors that
// registry already holds, and serves that registry over plain HTTP
// (Serve, --metrics-bind-address).
//
// Controllers call the small Observe*, Count* and Record* helpers where the
// work happens; each costs a map lookup and an atomic add. The package owns
// no controller logic and imports none.
package telemetry
