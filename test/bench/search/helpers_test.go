package search

import (
	"net/url"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func intstrFromInt(i int) intstr.IntOrString { return intstr.FromInt32(int32(i)) }

func urlQuery(q string) string { return url.QueryEscape(q) }

func ptrTrue() *bool { b := true; return &b }
