// Package tts is cyan's voice: providers that turn text into audio — the
// espeak-ng program (offline, the default), a GPT-SoVITS api_v2 server (a
// reference audio per emotion, api_v2's language codes as they are) and
// any OpenAI-compatible /v1/audio/speech server (gpt-4o-mini-tts is told
// the emotion as instructions) — voicing packets.Segment, the one segment
// type ({emotion, language, text}), a rule-based splitter that removes markup
// and cuts a streaming reply into segments as it is written (emotions from
// emoji, kaomoji, the persona's words and punctuation; see EmotionOf), an
// audio cache by (provider, voice, text), and Voice, the component that
// speaks the voiced channels: it follows the journal (Follow), voices a
// turn's speak segments instead of its text when the turn calls speak, and
// otherwise its text as the model writes it; it synthesizes segments in
// parallel (as many at once as the provider takes) and emits them in
// order, the first while the rest of the reply still streams. Join makes
// one audio of clips, Stream one stream of them as they come.
//
// Each provider declares itself in its own file (a Kind, registered with
// package registry from its init): the value of tts.provider that chooses
// it, its defaults and checks of the tts: section, how it is built, where
// it speaks from (Ready, for the doctor and the daemon's log) and what to
// do about a failed synthesis (Fix). New, config, `cyan doctor` and `cyan
// help config` read the registry; adding a voice is its file, nothing
// else. The persona's voice variables (emotion_words, voice_segments) are
// read here too (EmotionWords, Scripted).
//
// It uses config for the tts: section, packets for the speech segment
// (packets.Segment, the one segment type), glob for the voiced channels'
// patterns and journal for the events it follows.
//
// It may import config, packets, glob, journal and registry.
package tts
