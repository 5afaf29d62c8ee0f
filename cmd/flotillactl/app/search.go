package app

import (
	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/search"
)

// newSearchCommand returns search: a full-text query over every cached
// member object the caller may read.
func newSearchCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var from, size int
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Find objects across all member clusters (full-text query over the search cache)",
		Long: `Find objects across all member clusters with a bleve query over the objects a
ResourceRegistry caches, answered by ` + search.FullTextPath + `.

Fields: cluster, kind, apiVersion, group, resource, namespace, name, label
("key=value"), annotation, image, node, phase, condition ("Type=Status");
a bare word searches the whole object. Terms are ANDed; -term excludes;
* and ? are wildcards. Only objects the caller may read are found.`,
		Example: `  ` + self + ` search 'image:nginx* kind:Pod'
  ` + self + ` search 'cluster:member1 phase:Pending' --size 100`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return search.Run(cmd.Context(), cp.config, args[0], from, size, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&from, "from", 0, "Skip this many matches (paging).")
	cmd.Flags().IntVar(&size, "size", 50, "Print at most this many matches.")
	return cmd
}
