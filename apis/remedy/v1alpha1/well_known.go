package v1alpha1

// RemedyKind is the kind of Remedy.
const RemedyKind = "Remedy"
