package validation

import (
	"encoding/json"
	"regexp"
	"slices"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flotillavalidation "github.com/flotilla-io/flotilla/apis/flotilla/validation"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Limits of the binding schema.
const (
	// MaxEvictionReasonLength is the longest graceful eviction task reason.
	MaxEvictionReasonLength = 32
	// MaxEvictionMessageLength is the longest graceful eviction task message.
	MaxEvictionMessageLength = 1024
	// MaxComponentNameLength is the longest component name.
	MaxComponentNameLength = 32
)

// evictionReasonPattern is the CamelCase identifier an eviction reason must
// be, the pattern of metav1.Condition reasons.
var evictionReasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

var (
	supportedConflictResolutions = []policyv1alpha1.ConflictResolution{policyv1alpha1.ConflictAbort, policyv1alpha1.ConflictOverwrite}
	supportedWorkHealth          = []workv1alpha1.ResourceHealth{workv1alpha1.ResourceHealthy, workv1alpha1.ResourceUnhealthy, workv1alpha1.ResourceUnknown}
	supportedBindingHealth       = []workv1alpha2.ResourceHealth{workv1alpha2.ResourceHealthy, workv1alpha2.ResourceUnhealthy, workv1alpha2.ResourceUnknown}
)

// ValidateWork validates a new Work.
func ValidateWork(w *workv1alpha1.Work) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&w.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, flotillavalidation.ValidateApplyAnnotations(w.Annotations, field.NewPath("metadata", "annotations"))...)
	allErrs = append(allErrs, validateWorkSpec(&w.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateWorkStatus(&w.Status, field.NewPath("status"))...)
	return allErrs
}

// ValidateWorkUpdate validates an update of a Work: the new object must be
// valid and its permanent id label unchanged.
func ValidateWorkUpdate(newWork, oldWork *workv1alpha1.Work) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newWork.ObjectMeta, &oldWork.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, flotillavalidation.ValidateApplyAnnotations(newWork.Annotations, field.NewPath("metadata", "annotations"))...)
	allErrs = append(allErrs, validatePermanentIDUpdate(&newWork.ObjectMeta, &oldWork.ObjectMeta, workv1alpha2.WorkPermanentIDLabel)...)
	allErrs = append(allErrs, validateWorkSpec(&newWork.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateWorkStatus(&newWork.Status, field.NewPath("status"))...)
	return allErrs
}

// ValidateWorkStatusUpdate validates an update of a Work's status subresource.
func ValidateWorkStatusUpdate(newWork, oldWork *workv1alpha1.Work) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newWork.ObjectMeta, &oldWork.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateWorkStatus(&newWork.Status, field.NewPath("status"))...)
	return allErrs
}

// ValidateResourceBinding validates a new ResourceBinding.
func ValidateResourceBinding(rb *workv1alpha2.ResourceBinding) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&rb.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, flotillavalidation.ValidateApplyAnnotations(rb.Annotations, field.NewPath("metadata", "annotations"))...)
	allErrs = append(allErrs, validateBindingSpec(&rb.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateBindingStatus(&rb.Status, field.NewPath("status"))...)
	return allErrs
}

// ValidateResourceBindingUpdate validates an update of a ResourceBinding:
// the new object must be valid and its permanent id label unchanged.
func ValidateResourceBindingUpdate(newRB, oldRB *workv1alpha2.ResourceBinding) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newRB.ObjectMeta, &oldRB.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, flotillavalidation.ValidateApplyAnnotations(newRB.Annotations, field.NewPath("metadata", "annotations"))...)
	allErrs = append(allErrs, validatePermanentIDUpdate(&newRB.ObjectMeta, &oldRB.ObjectMeta, workv1alpha2.ResourceBindingPermanentIDLabel)...)
	allErrs = append(allErrs, validateBindingSpec(&newRB.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateBindingStatus(&newRB.Status, field.NewPath("status"))...)
	return allErrs
}

// ValidateResourceBindingStatusUpdate validates an update of a
// ResourceBinding's status subresource.
func ValidateResourceBindingStatusUpdate(newRB, oldRB *workv1alpha2.ResourceBinding) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newRB.ObjectMeta, &oldRB.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateBindingStatus(&newRB.Status, field.NewPath("status"))...)
	return allErrs
}

// ValidateClusterResourceBinding validates a new ClusterResourceBinding.
func ValidateClusterResourceBinding(crb *workv1alpha2.ClusterResourceBinding) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&crb.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, flotillavalidation.ValidateApplyAnnotations(crb.Annotations, field.NewPath("metadata", "annotations"))...)
	allErrs = append(allErrs, validateBindingSpec(&crb.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateBindingStatus(&crb.Status, field.NewPath("status"))...)
	return allErrs
}

// ValidateClusterResourceBindingUpdate validates an update of a
// ClusterResourceBinding: the new object must be valid and its permanent id
// label unchanged.
func ValidateClusterResourceBindingUpdate(newCRB, oldCRB *workv1alpha2.ClusterResourceBinding) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newCRB.ObjectMeta, &oldCRB.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, flotillavalidation.ValidateApplyAnnotations(newCRB.Annotations, field.NewPath("metadata", "annotations"))...)
	allErrs = append(allErrs, validatePermanentIDUpdate(&newCRB.ObjectMeta, &oldCRB.ObjectMeta, workv1alpha2.ClusterResourceBindingPermanentIDLabel)...)
	allErrs = append(allErrs, validateBindingSpec(&newCRB.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateBindingStatus(&newCRB.Status, field.NewPath("status"))...)
	return allErrs
}

// ValidateClusterResourceBindingStatusUpdate validates an update of a
// ClusterResourceBinding's status subresource.
func ValidateClusterResourceBindingStatusUpdate(newCRB, oldCRB *workv1alpha2.ClusterResourceBinding) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newCRB.ObjectMeta, &oldCRB.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateBindingStatus(&newCRB.Status, field.NewPath("status"))...)
	return allErrs
}

// validatePermanentIDUpdate forbids changing or removing the permanent id
// label once set. Adding it to an object that had none is allowed, since
// objects created before the webhook existed get it on a later write.
func validatePermanentIDUpdate(newMeta, oldMeta *metav1.ObjectMeta, key string) field.ErrorList {
	oldID, had := oldMeta.Labels[key]
	if !had || oldID == "" {
		return nil
	}
	return apivalidation.ValidateImmutableField(newMeta.Labels[key], oldID, field.NewPath("metadata", "labels").Key(key))
}

// validateWorkSpec checks that every manifest is an object with apiVersion
// and kind.
func validateWorkSpec(spec *workv1alpha1.WorkSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	manifestsPath := fldPath.Child("workload", "manifests")
	for i := range spec.Workload.Manifests {
		allErrs = append(allErrs, validateManifest(&spec.Workload.Manifests[i], manifestsPath.Index(i))...)
	}
	return allErrs
}

// validateManifest checks that a manifest decodes as a JSON object whose
// apiVersion and kind are non-empty strings.
func validateManifest(m *workv1alpha1.Manifest, fldPath *field.Path) field.ErrorList {
	data := m.Raw
	if len(data) == 0 && m.Object != nil {
		var err error
		if data, err = json.Marshal(m.Object); err != nil {
			return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, "cannot be encoded: "+err.Error())}
		}
	}
	if len(data) == 0 {
		return field.ErrorList{field.Required(fldPath, "a manifest must be an object with apiVersion and kind")}
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, "must be a JSON object")}
	}
	var allErrs field.ErrorList
	for _, key := range []string{"apiVersion", "kind"} {
		switch v, ok := obj[key].(string); {
		case obj[key] == nil:
			allErrs = append(allErrs, field.Required(fldPath.Child(key), ""))
		case !ok:
			allErrs = append(allErrs, field.Invalid(fldPath.Child(key), obj[key], "must be a string"))
		case v == "":
			allErrs = append(allErrs, field.Required(fldPath.Child(key), ""))
		}
	}
	return allErrs
}

// validateWorkStatus checks the enums of a Work's status and the bounds of
// its drift lists.
func validateWorkStatus(status *workv1alpha1.WorkStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ms := range status.ManifestStatuses {
		msPath := fldPath.Child("manifestStatuses").Index(i)
		if ms.Health != "" && !slices.Contains(supportedWorkHealth, ms.Health) {
			allErrs = append(allErrs, field.NotSupported(msPath.Child("health"), ms.Health, supportedWorkHealth))
		}
		driftPath := msPath.Child("drift")
		if len(ms.Drift) > workv1alpha1.MaxDriftedFields {
			allErrs = append(allErrs, field.TooMany(driftPath, len(ms.Drift), workv1alpha1.MaxDriftedFields))
			continue
		}
		for j, d := range ms.Drift {
			p := driftPath.Index(j)
			if d.Path == "" {
				allErrs = append(allErrs, field.Required(p.Child("path"), ""))
			}
			for _, f := range [...]struct{ name, value string }{{"path", d.Path}, {"valueInMember", d.ValueInMember}, {"valueApplied", d.ValueApplied}} {
				if len(f.value) > workv1alpha1.MaxDriftedFieldLength {
					allErrs = append(allErrs, field.TooLong(p.Child(f.name), "", workv1alpha1.MaxDriftedFieldLength))
				}
			}
		}
	}
	return allErrs
}

// validateBindingSpec validates the spec shared by ResourceBindings and
// ClusterResourceBindings.
func validateBindingSpec(spec *workv1alpha2.ResourceBindingSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList

	resourcePath := fldPath.Child("resource")
	if spec.Resource.APIVersion == "" {
		allErrs = append(allErrs, field.Required(resourcePath.Child("apiVersion"), ""))
	}
	if spec.Resource.Kind == "" {
		allErrs = append(allErrs, field.Required(resourcePath.Child("kind"), ""))
	}
	if spec.Resource.Name == "" {
		allErrs = append(allErrs, field.Required(resourcePath.Child("name"), ""))
	}

	componentNames := map[string]bool{}
	for i, c := range spec.Components {
		namePath := fldPath.Child("components").Index(i).Child("name")
		switch {
		case c.Name == "":
			allErrs = append(allErrs, field.Required(namePath, ""))
		case len(c.Name) > MaxComponentNameLength:
			allErrs = append(allErrs, field.TooLong(namePath, c.Name, MaxComponentNameLength))
		case componentNames[c.Name]:
			allErrs = append(allErrs, field.Duplicate(namePath, c.Name))
		}
		componentNames[c.Name] = true
	}

	for i, c := range spec.Clusters {
		if c.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("clusters").Index(i).Child("name"), ""))
		}
	}

	for i := range spec.GracefulEvictionTasks {
		allErrs = append(allErrs, validateGracefulEvictionTask(&spec.GracefulEvictionTasks[i], fldPath.Child("gracefulEvictionTasks").Index(i))...)
	}

	if spec.ConflictResolution != "" && !slices.Contains(supportedConflictResolutions, spec.ConflictResolution) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("conflictResolution"), spec.ConflictResolution, supportedConflictResolutions))
	}
	return allErrs
}

// validateGracefulEvictionTask checks the required fields of a task, its
// reason (1 to 32 characters, CamelCase) and its message (at most 1024).
func validateGracefulEvictionTask(task *workv1alpha2.GracefulEvictionTask, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if task.FromCluster == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("fromCluster"), ""))
	}
	if task.Producer == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("producer"), ""))
	}
	reasonPath := fldPath.Child("reason")
	switch {
	case task.Reason == "":
		allErrs = append(allErrs, field.Required(reasonPath, ""))
	case len(task.Reason) > MaxEvictionReasonLength:
		allErrs = append(allErrs, field.TooLong(reasonPath, task.Reason, MaxEvictionReasonLength))
	case !evictionReasonPattern.MatchString(task.Reason):
		allErrs = append(allErrs, field.Invalid(reasonPath, task.Reason,
			"must be a CamelCase identifier: a letter, then letters, digits, '_', ',' or ':', not ending in ',' or ':'"))
	}
	if len(task.Message) > MaxEvictionMessageLength {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("message"), task.Message, MaxEvictionMessageLength))
	}
	return allErrs
}

// validateBindingStatus checks the aggregated status items.
func validateBindingStatus(status *workv1alpha2.ResourceBindingStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, item := range status.AggregatedStatus {
		itemPath := fldPath.Child("aggregatedStatus").Index(i)
		if item.ClusterName == "" {
			allErrs = append(allErrs, field.Required(itemPath.Child("clusterName"), ""))
		}
		if item.Health != "" && !slices.Contains(supportedBindingHealth, item.Health) {
			allErrs = append(allErrs, field.NotSupported(itemPath.Child("health"), item.Health, supportedBindingHealth))
		}
	}
	return allErrs
}
