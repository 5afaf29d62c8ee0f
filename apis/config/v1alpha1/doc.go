// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.config.v1alpha1
// +groupName=config.karmada.io

// Package v1alpha1 is the v1alpha1 version of the config.karmada.io API:
// how Flotilla interprets resources it does not know natively, declared in
// Lua (ResourceInterpreterCustomization) or delegated to webhooks
// (ResourceInterpreterWebhookConfiguration), and the wire type posted to
// those webhooks (ResourceInterpreterContext). Wire-compatible with Karmada.
package v1alpha1
