//go:build tools

// Package tools pins the Temporal CLI v1.5.1 with a SQLite driver that survives cancelled calls
// (docs/decisions/0495-the-dev-server-on-a-mended-sqlite-driver.md). Keel builds
// github.com/temporalio/cli/cmd/temporal from this module; nothing here is Keel's own Go code.
package tools

import _ "github.com/temporalio/cli/cmd/temporal"
