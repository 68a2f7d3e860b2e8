package ttstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/tts"
)

// SoVITSRequest is api_v2's TTS_Request as the fake received it.
type SoVITSRequest struct {
	Method          string   `json:"-"`
	Text            *string  `json:"text"`
	TextLang        *string  `json:"text_lang"`
	RefAudioPath    *string  `json:"ref_audio_path"`
	AuxRefAudioPath []any    `json:"aux_ref_audio_paths"`
	PromptText      string   `json:"prompt_text"`
	PromptLang      *string  `json:"prompt_lang"`
	TopK            *int     `json:"top_k"`
	TopP            *float64 `json:"top_p"`
	Temperature     *float64 `json:"temperature"`
	TextSplitMethod *string  `json:"text_split_method"`
	BatchSize       *int     `json:"batch_size"`
	SpeedFactor     *float64 `json:"speed_factor"`
	MediaType       *string  `json:"media_type"`
	StreamingMode   any      `json:"streaming_mode"`
}

// GPTSoVITS is a fake GPT-SoVITS api_v2.py server (v2 models). Its zero
// value is ready; serve it with httptest.NewServer.
//
// Like the real one: POST /tts takes a JSON TTS_Request (a body that is not
// JSON is FastAPI's 422 {"detail": [...]}), GET /tts the same as query
// parameters; a missing text, text_lang, ref_audio_path or prompt_lang, a
// language or media_type it does not know, or an unknown text_split_method
// is 400 {"message": ...}; success is the audio with
// "Content-Type: audio/<media_type>". wav, raw and ogg are made here (ogg
// as api_v2.py's pack_ogg makes it — soundfile's OGG/Vorbis, one channel —
// with the sox program: api_v2.py at commit
// 48b1a0169a28582a8984402f82cf438d3bfa6aca); aac is refused.
type GPTSoVITS struct {
	mu   sync.Mutex
	reqs []SoVITSRequest
	// Fail, when set, is returned as 400 {"message": "tts failed",
	// "Exception": Fail} for every request.
	Fail string
	// Rate is the sample rate of the audio (default 32000, as v2 models).
	Rate int
	// Missing names reference audio files the server does not have: a
	// request with one is api_v2's tts_handle failing in its except
	// branch, 400 {"message": "tts failed", "Exception": str(e)} (the same
	// branch as Fail), e being the missing file's error.
	Missing map[string]bool
	// Broken names texts whose inference fails inside TTS.run: its except
	// branch yields "16000, np.zeros(int(16000), dtype=np.int16)" (a second
	// of 16 kHz silence; GPT_SoVITS/TTS_infer_pack/TTS.py at the commit
	// above, lines 1515-1518), which api_v2's tts_handle packs and answers
	// with 200 like any clip.
	Broken map[string]bool
	// Latency, when set, is how long making text's clip takes (see
	// SoVITSLatency); Wait waits it (default: the time passes). Like
	// api_v2, the fake then makes one clip at a time: tts_handle is an
	// async handler that calls tts_pipeline.run's generator with next()
	// without yielding to the event loop, and uvicorn.run starts one
	// worker (api_v2.py at the commit above, lines 418-443 and 572), so a
	// second request waits until the first is answered.
	Latency func(text string) time.Duration
	// Wait replaces the passing of Latency's time: a test scales it, or
	// holds a text's clip until it lets it go.
	Wait func(text string, d time.Duration)
	// Brief makes every clip 100 ms of tone whatever its text (not
	// api_v2's: a page test that plays many clips stays quick).
	Brief bool
	busy  sync.Mutex // one clip at a time, when Latency or Wait is set
}

// SoVITSLatency is a model of how long api_v2 takes for one sentence on a
// consumer GPU: about 2.4 s for a sentence of 18 characters. TTS.run
// (GPT_SoVITS/TTS_infer_pack/TTS.py at commit
// 48b1a0169a28582a8984402f82cf438d3bfa6aca, from line 997) cleans the
// text and extracts its BERT features, decodes semantic tokens with the
// autoregressive T2S model — the part that grows with the text, about a
// token per 20 ms of speech — and runs the SoVITS vocoder over them; the
// fixed part (text front end, BERT, vocoder start) is taken as 0.6 s and
// the decoding as 0.1 s a character. The numbers are an assumption that
// matches the 2.4 s a sentence seen with a v2 model, not a measurement of
// this fake.
func SoVITSLatency(text string) time.Duration {
	return 600*time.Millisecond + time.Duration(utf8.RuneCountInString(text))*100*time.Millisecond
}

// v2Languages are tts_config.languages of a v2 model: v2_languages in
// GPT_SoVITS/TTS_infer_pack/TTS.py of github.com/RVC-Boss/GPT-SoVITS at
// commit 48b1a0169a28582a8984402f82cf438d3bfa6aca (api_v2.py checks
// text_lang.lower() and prompt_lang.lower() against it, and answers 400
// "text_lang: X is not supported in version v2").
var v2Languages = map[string]bool{"auto": true, "auto_yue": true, "en": true, "zh": true, "ja": true, "yue": true, "ko": true,
	"all_zh": true, "all_ja": true, "all_yue": true, "all_ko": true}

var cutMethods = map[string]bool{"cut0": true, "cut1": true, "cut2": true, "cut3": true, "cut4": true, "cut5": true}

// Requests returns what the fake got, oldest first.
func (g *GPTSoVITS) Requests() []SoVITSRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]SoVITSRequest(nil), g.reqs...)
}

func (g *GPTSoVITS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/tts" {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
		return
	}
	var req SoVITSRequest
	switch r.Method {
	case http.MethodPost:
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{
				{"type": "json_invalid", "loc": []any{"body", 0}, "msg": "JSON decode error", "input": map[string]any{}}}})
			return
		}
	case http.MethodGet:
		q := r.URL.Query()
		str := func(k string) *string {
			if !q.Has(k) {
				return nil
			}
			v := q.Get(k)
			return &v
		}
		req.Text, req.TextLang, req.RefAudioPath, req.PromptLang = str("text"), str("text_lang"), str("ref_audio_path"), str("prompt_lang")
		req.PromptText, req.MediaType, req.TextSplitMethod = q.Get("prompt_text"), str("media_type"), str("text_split_method")
		if req.TextLang == nil || req.PromptLang == nil {
			// api_v2 calls .lower() on them before any check.
			http.Error(w, "Internal Server Error", http.StatusInternalServerError)
			return
		}
		if v := q.Get("streaming_mode"); v != "" {
			req.StreamingMode = v
		}
	default:
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"detail": "Method Not Allowed"})
		return
	}
	req.Method = r.Method
	g.mu.Lock()
	g.reqs = append(g.reqs, req)
	fail := g.Fail
	g.mu.Unlock()

	deref := func(p *string, def string) string {
		if p == nil {
			return def
		}
		return *p
	}
	text, lang, ref := deref(req.Text, ""), strings.ToLower(deref(req.TextLang, "")), deref(req.RefAudioPath, "")
	plang, media, cut := strings.ToLower(deref(req.PromptLang, "")), deref(req.MediaType, "wav"), deref(req.TextSplitMethod, "cut5")
	bad := func(msg string) { writeJSON(w, http.StatusBadRequest, map[string]any{"message": msg}) }
	switch {
	case ref == "":
		bad("ref_audio_path is required")
	case text == "":
		bad("text is required")
	case lang == "":
		bad("text_lang is required")
	case !v2Languages[lang]:
		bad(fmt.Sprintf("text_lang: %s is not supported in version v2", lang))
	case plang == "":
		bad("prompt_lang is required")
	case !v2Languages[plang]:
		bad(fmt.Sprintf("prompt_lang: %s is not supported in version v2", plang))
	case media != "wav" && media != "raw" && media != "ogg" && media != "aac":
		bad(fmt.Sprintf("media_type: %s is not supported", media))
	case !cutMethods[cut]:
		bad(fmt.Sprintf("text_split_method:%s is not supported", cut))
	case !streamingOK(req.StreamingMode):
		bad("the value of streaming_mode must be 0, 1, 2, 3(int) or true/false(bool)")
	case fail != "":
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "tts failed", "Exception": fail})
	case g.Missing[ref]:
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "tts failed", "Exception": fmt.Sprintf("[Errno 2] No such file or directory: '%s'", ref)})
	case media == "aac":
		bad("the fake makes only wav, raw and ogg")
	case g.Broken[text]:
		g.work(text)
		w.Header().Set("Content-Type", "audio/"+media)
		_, _ = w.Write(silence(media))
	default:
		g.work(text)
		rate := g.Rate
		if rate == 0 {
			rate = 32000
		}
		said := text
		if g.Brief {
			said = "-"
		}
		pcm := Tone(said, rate)
		body := pcm
		switch media {
		case "wav":
			body = ToneWAV(said, rate)
		case "ogg":
			ogg, err := OggVorbis(ToneWAV(said, rate))
			if err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]any{"message": "tts failed", "Exception": err.Error()})
				return
			}
			body = ogg
		}
		w.Header().Set("Content-Type", "audio/"+media)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}
}

// work takes the time making text's clip takes, one clip at a time.
func (g *GPTSoVITS) work(text string) {
	if g.Latency == nil && g.Wait == nil {
		return
	}
	g.busy.Lock()
	defer g.busy.Unlock()
	var d time.Duration
	if g.Latency != nil {
		d = g.Latency(text)
	}
	if g.Wait != nil {
		g.Wait(text, d)
		return
	}
	time.Sleep(d)
}

// silence is a second of 16 kHz silence as media.
func silence(media string) []byte {
	pcm := make([]byte, 2*16000)
	switch media {
	case "raw":
		return pcm
	case "ogg":
		ogg, _ := OggVorbis(tts.PCMWAV(pcm, 16000, 1))
		return ogg
	}
	return tts.PCMWAV(pcm, 16000, 1)
}

func streamingOK(v any) bool {
	switch x := v.(type) {
	case nil, bool:
		return true
	case float64:
		return x == 0 || x == 1 || x == 2 || x == 3
	case string:
		return x == "true" || x == "false" || x == "0" || x == "1" || x == "2" || x == "3"
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// OggVorbis encodes a WAV as Ogg Vorbis with the sox program.
func OggVorbis(wav []byte) ([]byte, error) {
	cmd := exec.Command("sox", "-t", "wav", "-", "-t", "ogg", "-")
	cmd.Stdin = bytes.NewReader(wav)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sox: %v %s", err, stderr.String())
	}
	return out, nil
}
