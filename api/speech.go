package api

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tts"
)

type speechRequest struct {
	Text     string            `json:"text"`
	Segments []packets.Segment `json:"segments"`
	// Voice overrides the provider's voice ("" keeps it).
	Voice string `json:"voice"`
	// Stream sends each segment's audio as soon as it and those before it
	// are made (speechStream), instead of the whole at the end.
	Stream bool `json:"stream"`
}

// Bounds of POST /api/v1/speech.
const (
	maxSpeechRunes    = 4000
	maxSpeechSegments = 64
)

// speech: POST /api/v1/speech {text | segments, voice?, stream?} → the
// audio of the whole, in order (one WAV, or the provider's format for one
// segment), with its Content-Type; streamed (speechStream) when asked.
// Text is cut by the rule splitter.
func (s *Server) speech(w http.ResponseWriter, r *http.Request) {
	if s.o.Voice == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the voice is not running")
		return
	}
	var req speechRequest
	if !decodeBody(w, r, &req) {
		return
	}
	segs := req.Segments
	switch {
	case strings.TrimSpace(req.Text) != "" && len(segs) > 0:
		writeError(w, http.StatusBadRequest, "invalid_request", "send text or segments, not both")
		return
	case strings.TrimSpace(req.Text) != "":
		if n := len([]rune(req.Text)); n > maxSpeechRunes {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("the text has %d characters; send at most %d at a time", n, maxSpeechRunes))
			return
		}
		segs = tts.Split(req.Text)
	case len(segs) == 0:
		writeError(w, http.StatusBadRequest, "invalid_request", `nothing to say: send {"text": "…"} or {"segments": [{"text", "language"?, "emotion"?}]}`)
		return
	}
	if len(segs) > maxSpeechSegments {
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("%d segments; send at most %d at a time", len(segs), maxSpeechSegments))
		return
	}
	total := 0
	for i := range segs {
		seg := &segs[i]
		seg.Text = strings.TrimSpace(seg.Text)
		total += len([]rune(seg.Text))
		if seg.Text == "" {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("segment %d has no text", i+1))
			return
		}
		*seg = tts.NormalizeSegment(*seg)
	}
	if total > maxSpeechRunes {
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("the segments hold %d characters; send at most %d at a time", total, maxSpeechRunes))
		return
	}
	if len(segs) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request", "nothing to say: the text holds no words")
		return
	}
	if req.Voice != "" && !voiceRE.MatchString(req.Voice) {
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("voice %q is not a voice name (letters, digits and _+./-)", req.Voice))
		return
	}
	if req.Stream {
		s.speechStream(w, r, segs, req.Voice)
		return
	}
	clips, err := s.o.Voice.Say(r.Context(), segs, req.Voice)
	if err != nil {
		s.speechError(w, err)
		return
	}
	audio := make([]tts.Audio, len(clips))
	for i, c := range clips {
		audio[i] = c.Audio
	}
	joined, err := tts.Join(audio)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "invalid_request", err.Error())
		return
	}
	w.Header().Set("X-Cyan-Segments", strconv.Itoa(len(clips)))
	writeAudio(w, joined)
}

// speechStream answers POST /api/v1/speech with "stream": true. The
// answer starts with the first segment's audio, as soon as it is made, and
// each next segment's follows as it is, flushed: a WAV voice gives one WAV
// whose sizes are 0xFFFFFFFF ("until the end", as streaming WAV writers
// do; curl … | play -t wav - plays it as it comes), every segment at the
// first one's rate and channels; MP3, AAC and Ogg voices give their frames
// or chained streams. A failure before any audio is the JSON error the
// whole answer gets; after it, a failed segment is skipped, logged and
// named in the X-Cyan-Skipped trailer ("3 (why), 7 (why)"; 1-based), and
// X-Cyan-Segments, a trailer too, counts the segments voiced.
func (s *Server) speechStream(w http.ResponseWriter, r *http.Request, segs []packets.Segment, voice string) {
	var (
		out     tts.Stream
		started bool
		voiced  int
		skipped []string
	)
	rc := http.NewResponseController(w)
	s.o.Voice.Each(r.Context(), segs, voice, func(i int, c tts.Clip, err error) bool {
		var b []byte
		if err == nil {
			b, err = out.Next(c.Audio)
		}
		if err != nil {
			if !started {
				var te *tts.Error
				if errors.As(err, &te) || errors.Is(err, tts.ErrOff) || r.Context().Err() != nil {
					s.speechError(w, fmt.Errorf("segment %d (%q): %w", i+1, segs[i].Text, err))
				} else {
					writeError(w, http.StatusUnprocessableEntity, "invalid_request", err.Error())
				}
				return false
			}
			s.log.Warn("a streamed speech segment is skipped", "segment", i+1, "text", segs[i].Text, "err", err)
			skipped = append(skipped, fmt.Sprintf("%d (%s)", i+1, strings.Join(strings.Fields(err.Error()), " ")))
			return true
		}
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", out.Type())
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Cache-Control", "no-store")
			h.Set("Trailer", "X-Cyan-Segments, X-Cyan-Skipped")
			w.WriteHeader(http.StatusOK)
		}
		voiced++
		if _, err := w.Write(b); err != nil {
			return false // the client left
		}
		return rc.Flush() == nil
	})
	if started {
		w.Header().Set("X-Cyan-Segments", strconv.Itoa(voiced))
		w.Header().Set("X-Cyan-Skipped", strings.Join(skipped, ", "))
	}
}

var voiceRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_+./-]{0,63}$`)

func (s *Server) speechError(w http.ResponseWriter, err error) {
	var te *tts.Error
	switch {
	case errors.Is(err, tts.ErrOff):
		writeError(w, http.StatusServiceUnavailable, "voice_off", err.Error())
	case tts.Unavailable(err):
		writeError(w, http.StatusServiceUnavailable, "voice_unavailable", err.Error())
	case errors.As(err, &te):
		writeError(w, http.StatusBadGateway, "voice_error", err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
	}
}

// speechAudio: GET /api/v1/speech/{key} — a voiced segment's audio (the
// "audio" of a speech event), while the cache keeps it.
func (s *Server) speechAudio(w http.ResponseWriter, r *http.Request) {
	if s.o.Voice == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the voice is not running")
		return
	}
	a, ok := s.o.Voice.Audio(r.PathValue("key"))
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "this audio is no longer kept; POST /api/v1/speech with its text makes it again")
		return
	}
	w.Header().Set("Cache-Control", "private, max-age=86400, immutable")
	writeAudio(w, a)
}

func writeAudio(w http.ResponseWriter, a tts.Audio) {
	w.Header().Set("Content-Type", a.Type)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.Data)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.Data)
}

// speechActions: PUT /api/v1/speech/actions {"actions": "skip" | "speak" |
// "narrate"} → {"actions"}: what the *actions* of the replies begun from
// now on become, the page's setting. It lasts until the daemon stops
// (tts.actions is the mode at start); the page sends its choice again
// each time it opens.
func (s *Server) speechActions(w http.ResponseWriter, r *http.Request) {
	if s.o.Voice == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the voice is not running")
		return
	}
	var req struct {
		Actions string `json:"actions"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if err := s.o.Voice.SetActions(strings.TrimSpace(req.Actions)); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", `actions is "skip" (leave *actions* unsaid), "speak" (read them in the reply's voice) or "narrate" (read them apart, in tts.narrator's voice)`)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"actions": s.o.Voice.Actions()})
}
