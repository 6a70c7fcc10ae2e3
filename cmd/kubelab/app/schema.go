package app

import (
	"github.com/spf13/cobra"

	"kubelab.dev/kubelab/schema"
)

func newSchemaCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "schema lab|exercise",
		Short: "Print the JSON Schema of lab or exercise files (for editors: yaml-language-server)",
		Example: `  kubelab schema lab > lab.schema.json
  # in a lab file: # yaml-language-server: $schema=lab.schema.json`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: schema.Kinds(),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := schema.For(args[0])
			if err != nil {
				return invalid(err)
			}
			_, err = g.streams.Out.Write(b)
			return err
		},
	}
}
