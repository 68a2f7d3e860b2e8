// Package registry is where the chat platforms and the voice providers
// declare themselves, as database/sql drivers and Caddy modules do: a
// platform package calls RegisterPlatform from its init, a voice provider
// RegisterVoice, and the rest of cyan reads the registry instead of
// listing them by hand — config decodes and checks each platform's
// section (bridges.<key>) and the tts: section by its provider, the
// daemon builds each platform's bridges and each voice, cmd's doctor and
// help ask each for its check and its line.
//
// What is declared here is only what config needs, since config imports
// this package and must import nothing above it: a platform's key, its
// help line and an empty Section to decode into (its instances' names,
// their validation and defaults, their secrets masked); a voice's name and
// help line. Each layer above asserts the interface it needs of the same
// values, as Caddy's optional lifecycle interfaces: config asserts
// config.VoiceSettings on a voice, package bridge's Platform (build the
// adapters, the doctor check, which errors a restart cannot mend) on a
// section, package tts's Kind (build the provider, the doctor check, what
// to do about an error) on a voice. A platform package declares all of it
// in one file, with interface guards that fail the build when a part is
// missing.
//
// The registry is written by init functions only, before main runs, and
// read afterwards; a second registration of a name panics, as sql.Register
// does.
//
// It imports nothing of cyan's.
package registry
