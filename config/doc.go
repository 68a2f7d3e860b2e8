// Package config loads cyan's configuration: built-in defaults, then a YAML
// file (CYAN_CONFIG, else <data dir>/cyan.yaml when present), then the
// environment (CYAN_DATA_DIR, CYAN_ADDR, CYAN_LLM_PROVIDER, CYAN_LLM_BASE_URL,
// CYAN_LLM_MODEL, CYAN_LLM_API_KEY), each layer overriding the one before.
//
// Unknown keys and bad values are errors that name the file, the line and the
// key (or the environment variable), and say what would be accepted.
//
// The chat platforms' sections (bridges.<key>) and the voice providers'
// checks of the tts: section are declared by those parts, in package
// registry; config decodes and checks them through it and names none of
// them.
//
// Beside the standard library it uses go.yaml.in/yaml/v3.
//
// It may import packets, glob, clock and registry.
package config
