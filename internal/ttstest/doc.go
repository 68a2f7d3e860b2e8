// Package ttstest holds fakes of the speech servers cyan's voices talk to,
// speaking their real protocols: GPT-SoVITS's api_v2.py (POST and GET /tts)
// and OpenAI's POST /v1/audio/speech. Each answers with a real WAV (a tone
// as long as the text) and records the requests it got; the GPT-SoVITS fake
// can also take api_v2's time (one clip at a time, SoVITSLatency, scaled
// or held by a test) and answer a failed inference with its silence.
//
// It uses tts for the WAV writer.
//
// It may import tts.
package ttstest
