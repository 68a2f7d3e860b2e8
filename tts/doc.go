// Package tts is cyan's voice: providers that turn text into audio — the
// espeak-ng program (offline, the default), a GPT-SoVITS api_v2 server (a
// reference audio per emotion) and any OpenAI-compatible /v1/audio/speech
// server — a rule-based splitter that cuts a streaming reply into
// segments (emotion, language, text) as it is written, an audio cache by
// (provider, voice, text), and Voice, the component that speaks the voiced
// channels: it synthesizes segments in parallel and emits them in order,
// the first while the rest of the reply still streams.
//
// It uses config for the tts: section and packets for channel globs.
//
// It may import config, packets and glob.
package tts
