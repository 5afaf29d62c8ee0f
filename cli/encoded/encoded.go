// Package encoded prints a command's answer as -o yaml or -o json, the
// same way for every flotillactl command that also prints a table.
package encoded

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Print writes v to w when output is "yaml" or "json" and says it did; for
// one of tables (the formats the command prints itself) it writes nothing
// and says so; any other output is an error naming them all.
func Print(w io.Writer, v any, output string, tables ...string) (bool, error) {
	var b []byte
	var err error
	switch output {
	case "yaml":
		b, err = yaml.Marshal(v)
	case "json":
		if b, err = json.MarshalIndent(v, "", "    "); err == nil {
			b = append(b, '\n')
		}
	default:
		if slices.Contains(tables, output) {
			return false, nil
		}
		var named []string
		for _, t := range tables {
			if t != "" {
				named = append(named, t)
			}
		}
		return false, fmt.Errorf("unknown output format %q: one of %s", output, strings.Join(append(named, "yaml", "json"), ", "))
	}
	if err != nil {
		return false, err
	}
	_, err = w.Write(b)
	return true, err
}
