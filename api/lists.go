package api

import (
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tools"
)

// The answers of the list routes. The command line decodes into these
// same types, so a field the API adds or renames is one change.

// MessageList is the answer of GET /api/v1/messages.
type MessageList struct {
	Messages []Message `json:"messages"`
}

// ObserverList is the answer of GET /api/v1/observers.
type ObserverList struct {
	Observers []packets.ObserverStatus `json:"observers"`
}

// ToolList is the answer of GET /api/v1/tools.
type ToolList struct {
	Tools    []Tool                 `json:"tools"`
	Problems []*tools.ManifestError `json:"problems"`
	MCP      map[string]string      `json:"mcp,omitempty"`
}

// ApprovalList is the answer of GET /api/v1/approvals.
type ApprovalList struct {
	Approvals []tools.Approval `json:"approvals"`
}
