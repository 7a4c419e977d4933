// Command flagsdoc writes docs/flags.md from the settings' declarations:
//
//	go run ./scripts/flagsdoc > docs/flags.md
//
// CI runs it and fails when docs/flags.md differs from what it prints.
package main

import (
	"os"

	"github.com/neardup/neardup/settings"
)

func main() { settings.Markdown(os.Stdout) }
