package config

import (
	"reflect"

	"go.yaml.in/yaml/v3"
)

func reflectValue(c *Config) reflect.Value { return reflect.ValueOf(c).Elem() }

// MarshalYAML writes a Duration as "30s".
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// Mask hides all but the last four characters of a secret.
func Mask(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) <= 8:
		return "****"
	default:
		return "****" + s[len(s)-4:]
	}
}

// Redacted returns a copy with secrets masked, safe to print or log.
func (c Config) Redacted() Config {
	c.LLM.APIKey = Mask(c.LLM.APIKey)
	c.API.AllowedHosts = append([]string(nil), c.API.AllowedHosts...)
	c.API.AllowedOrigins = append([]string(nil), c.API.AllowedOrigins...)
	servers := make([]MCPServer, len(c.MCP.Servers))
	for i, s := range c.MCP.Servers {
		env := make(map[string]string, len(s.Env))
		for k, v := range s.Env {
			env[k] = Mask(v)
		}
		s.Env = env
		servers[i] = s
	}
	c.MCP.Servers = servers
	c.Bridges = c.Bridges.redacted()
	return c
}

// YAML renders the effective configuration, secrets masked.
func (c *Config) YAML() ([]byte, error) {
	return yaml.Marshal(c.Redacted())
}
