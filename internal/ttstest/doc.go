// Package ttstest holds fakes of the speech servers cyan's voices talk to,
// speaking their real protocols: GPT-SoVITS's api_v2.py (POST and GET /tts)
// and OpenAI's POST /v1/audio/speech. Each answers with a real WAV (a tone
// as long as the text) and records the requests it got.
//
// It uses tts for the WAV writer.
//
// It may import tts.
package ttstest
