// Package names declares the names flotilla-apiserver gives what it runs
// on the host, for the server, its tools and its test bed: a leaf package,
// so that reading a name does not link the server.
package names

const (
	// Service is the default name of the Service the APIServices point at
	// (--service-name); its serving certificate is for
	// <Service>.<namespace>.svc.
	Service = "flotilla-apiserver"
	// ControllersLease is the host Lease the replicas elect the
	// controllers' leader with, in the system namespace.
	ControllersLease = "flotilla-controllers"
)
