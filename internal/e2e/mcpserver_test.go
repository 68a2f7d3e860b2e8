package e2e

import (
	"context"
	"log"
	"os"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServerEnv, set to 1, makes the test binary a tiny MCP server for the
// end-to-end tests instead of running tests (TestMain checks it first):
// "add" sums two numbers, "crash" makes the process exit (to test
// restarts). The daemon under test starts it as its configured server, so
// no second binary is built.
const mcpServerEnv = "CYAN_E2E_MCP_SERVER"

type addArgs struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

// mcpServerMain serves the calc tools on stdin and stdout until stdin
// closes, then exits.
func mcpServerMain() {
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "v1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "add two numbers"}, func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatFloat(a.A+a.B, 'f', -1, 64)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "exit the server"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
	os.Exit(0)
}
