package interpret

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/interpreter/lua"
)

// namedResult is one value karmadactl interpret prints, with its name.
type namedResult struct {
	name  string
	value any
}

// namedResults names the values of op's result as karmadactl does:
// replica and requires, components, revised, retained, aggregatedStatus,
// status, healthy, dependencies.
func namedResults(op interpreter.Operation, result any) []namedResult {
	switch op {
	case interpreter.InterpretReplica:
		r := result.(replicaResult)
		return []namedResult{{"replica", r.Replicas}, {"requires", r.Requires}}
	case interpreter.InterpretHealth:
		return []namedResult{{"healthy", result.(healthResult).Healthy}}
	}
	name := map[interpreter.Operation]string{
		interpreter.InterpretComponent:  "components",
		interpreter.ReviseReplica:       "revised",
		interpreter.Retain:              "retained",
		interpreter.AggregateStatus:     "aggregatedStatus",
		interpreter.InterpretStatus:     "status",
		interpreter.InterpretDependency: "dependencies",
	}[op]
	return []namedResult{{name, result}}
}

// printBlocks prints results as karmadactl interpret does: for each,
// "---", "# [i/n] name:" and the value as YAML.
func printBlocks(out io.Writer, results []namedResult) error {
	for i, r := range results {
		// Through JSON, so raw and unstructured values print as their content.
		data, err := json.Marshal(r.value)
		if err != nil {
			return err
		}
		y, err := yaml.JSONToYAML(data)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "---\n# [%d/%d] %s:\n%s", i+1, len(results), r.name, y); err != nil {
			return err
		}
	}
	return nil
}

// errCheckFailed: the report said what failed; the exit code says it too.
var errCheckFailed = errors.New("some customizations failed the check (see above)")

// runCheck validates and compiles each customization of path and prints
// karmadactl's report: the source, the target, and each rule PASS, UNSET
// or ERROR.
func runCheck(path string, out io.Writer) error {
	docs, err := readDocuments(path)
	if err != nil {
		return err
	}
	w := printers.GetNewTabWriter(out)
	failed := false
	for _, d := range docs {
		fmt.Fprintln(w, "-----------------------------------")
		ric := &configv1alpha1.ResourceInterpreterCustomization{}
		if err := json.Unmarshal(d.json, ric); err != nil {
			fmt.Fprintf(w, "SOURCE: %s\n%v\n", d.name, err)
			failed = true
			continue
		}
		source := d.name
		if ric.Name != "" {
			source = ric.Name
		}
		fmt.Fprintf(w, "SOURCE: %s\n", source)
		if ric.Kind != "ResourceInterpreterCustomization" {
			fmt.Fprintf(w, "not a ResourceInterpreterCustomization: kind %q\n", ric.Kind)
			failed = true
			continue
		}
		t := ric.Spec.Target
		switch {
		case t.Kind == "":
			fmt.Fprintln(w, "target.kind not set")
			failed = true
			continue
		case t.APIVersion == "":
			fmt.Fprintln(w, "target.apiVersion not set")
			failed = true
			continue
		}
		fmt.Fprintf(w, "TARGET: %s %s\t\n", t.APIVersion, t.Kind)
		fmt.Fprintf(w, "RULERS:\n")
		for _, s := range ric.Spec.Customizations.Scripts() {
			fmt.Fprintf(w, "    %s:\t", s.Operation)
			if !s.Set || s.Script == "" {
				fmt.Fprintln(w, "UNSET")
				continue
			}
			if _, err := lua.Compile(s.Script, string(s.Function), 1); err != nil {
				failed = true
				fmt.Fprintf(w, "ERROR: %s\t\n", strings.TrimSpace(err.Error()))
				continue
			}
			fmt.Fprintln(w, "PASS")
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed {
		return errCheckFailed
	}
	return nil
}

// showDocs prints, for each rule, the Lua function it calls, what it is
// given and what it returns.
func showDocs(out io.Writer) error {
	docs := map[interpreter.Operation]string{
		interpreter.Retain:              "Retain(desiredObj, observedObj) returns the object to apply: desiredObj with the member's runtime values (spec fields the member owns) kept.",
		interpreter.InterpretReplica:    "GetReplicas(desiredObj) returns the replicas and the requirements of one replica ({nodeClaim = {nodeSelector, tolerations, hardNodeAffinity}, resourceRequest, namespace, priorityClassName}).",
		interpreter.InterpretComponent:  "GetComponents(desiredObj) returns the components ({name, replicas, replicaRequirements}) of a workload of several pod templates.",
		interpreter.ReviseReplica:       "ReviseReplica(desiredObj, desiredReplica) returns desiredObj with desiredReplica replicas.",
		interpreter.InterpretStatus:     "ReflectStatus(observedObj) returns the status reported to the control plane.",
		interpreter.AggregateStatus:     "AggregateStatus(desiredObj, statusItems) returns desiredObj with the status aggregated from the items ({clusterName, status, applied, health}).",
		interpreter.InterpretHealth:     "InterpretHealth(observedObj) returns true when the object is healthy.",
		interpreter.InterpretDependency: "GetDependencies(desiredObj) returns the objects it depends on ({apiVersion, kind, namespace, name, labelSelector}).",
	}
	for _, op := range interpretOperations {
		if _, err := fmt.Fprintf(out, "%s:\n  %s\n", op, docs[op]); err != nil {
			return err
		}
	}
	return nil
}
