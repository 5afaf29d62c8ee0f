package names

// What flotilla-apiserver runs on the host, in SystemNamespace.
const (
	// ServerService is the default name of the Service the APIServices
	// point at (--service-name); its serving certificate is for
	// <ServerService>.<namespace>.svc.
	ServerService = "flotilla-apiserver"
	// ControllersLease is the host Lease the replicas elect the
	// controllers' leader with.
	ControllersLease = "flotilla-controllers"
)

// AgentRegistrationController is the name, in flotilla-apiserver's
// --controllers, of the controller that decides the agents' certificate
// requests; flotillactl register names it when a request stays undecided.
const AgentRegistrationController = "agent-registration"
