package tgtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// VoiceFile is a file the bot sent with sendVoice.
type VoiceFile struct {
	Chat int64
	Data []byte
	// AsVoice: the file is OGG with Opus and was posted as a voice
	// message; otherwise it was posted as a document.
	AsVoice bool
}

// sendVoice takes a voice message as the Bot API does: the file is an
// upload ("voice" part of a multipart form; a file_id or URL is not kept
// by the fake and is refused as telegram-bot-api refuses an unknown one:
// "Bad Request: wrong file identifier/HTTP URL specified"), "Bad Request:
// there is no voice in the request" without one (telegram-bot-api
// Client.cpp get_input_file, commit 01a3679). Only an OGG file whose
// stream is Opus becomes a voice message (the Bot API's sendVoice: "your
// audio must be in an .OGG file encoded with OPUS … other formats may be
// sent as Audio or Document"): the fake checks the Ogg page's "OggS"
// capture pattern and the "OpusHead" identification header of its first
// packet (RFC 7845 section 5.1), and posts anything else as a document.
func (s *Server) sendVoice(w http.ResponseWriter, r *http.Request, p map[string]string) {
	chat, err := strconv.ParseInt(p["chat_id"], 10, 64)
	if err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: chat not found", nil)
		return
	}
	var data []byte
	if r.MultipartForm != nil && len(r.MultipartForm.File["voice"]) > 0 {
		f, err := r.MultipartForm.File["voice"][0].Open()
		if err == nil {
			data, err = io.ReadAll(f)
			f.Close()
		}
		if err != nil {
			fail(w, http.StatusBadRequest, "Bad Request: "+err.Error(), nil)
			return
		}
	} else if p["voice"] != "" {
		fail(w, http.StatusBadRequest, "Bad Request: wrong file identifier/HTTP URL specified", nil)
		return
	}
	if len(data) == 0 {
		fail(w, http.StatusBadRequest, "Bad Request: there is no voice in the request", nil)
		return
	}
	s.mu.Lock()
	s.init()
	if code, desc, params := s.refuse(chat); code != 0 {
		s.mu.Unlock()
		fail(w, code, desc, params)
		return
	}
	s.nextMsg++
	m := Message{MessageID: s.nextMsg, From: &s.Bot, Chat: Chat{ID: chat}, Date: time.Now().Unix()}
	id := fmt.Sprintf("voice%d", s.nextMsg)
	asVoice := oggOpus(data)
	file, _ := json.Marshal(map[string]any{"file_id": id, "file_unique_id": id, "file_size": len(data), "mime_type": map[bool]string{true: "audio/ogg", false: "application/octet-stream"}[asVoice]})
	if asVoice {
		m.Voice = file
	} else {
		m.Document = file
	}
	s.voices = append(s.voices, VoiceFile{Chat: chat, Data: data, AsVoice: asVoice})
	s.post(m)
	s.notify()
	s.mu.Unlock()
	ok(w, m)
}

// oggOpus reports whether b begins an Ogg page whose first packet is an
// Opus identification header.
func oggOpus(b []byte) bool {
	if len(b) < 27 || string(b[:4]) != "OggS" {
		return false
	}
	start := 27 + int(b[26])
	return len(b) >= start+8 && string(b[start:start+8]) == "OpusHead"
}

// Voices are the files sent with sendVoice to a chat, in order.
func (s *Server) Voices(chat int64) []VoiceFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []VoiceFile
	for _, v := range s.voices {
		if v.Chat == chat {
			out = append(out, v)
		}
	}
	return out
}
