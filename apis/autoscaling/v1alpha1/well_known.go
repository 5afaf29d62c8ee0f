package v1alpha1

const (
	// FederatedHPAKind is the kind of FederatedHPA, the only kind of this
	// group a CronFederatedHPA may target.
	FederatedHPAKind = "FederatedHPA"
	// CronFederatedHPAKind is the kind of CronFederatedHPA.
	CronFederatedHPAKind = "CronFederatedHPA"

	// QuerySourceAnnotationKey marks a metrics object with the member cluster it was read from.
	QuerySourceAnnotationKey = "resource.karmada.io/query-from-cluster"
)

// Schema defaults of this group, applied by defaults.go.
const (
	// DefaultMinReplicas is the minReplicas of a FederatedHPA that sets none.
	DefaultMinReplicas int32 = 1
	// DefaultCPUUtilization is the target average CPU utilization, in percent,
	// of a FederatedHPA that lists no metrics.
	DefaultCPUUtilization int32 = 80
	// DefaultHistoryLimit is the successful and failed history limit of a CronFederatedHPA rule.
	DefaultHistoryLimit int32 = 3
)
