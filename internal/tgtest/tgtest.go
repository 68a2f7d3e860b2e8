package tgtest

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Server is a fake Bot API. Set Token and Bot before serving.
type Server struct {
	Token string
	Bot   User // getMe's answer

	// FirstUpdateID is the update_id of the first update (0: 1). Real bots
	// see large ids that do not start at 1.
	FirstUpdateID int

	mu       sync.Mutex
	updates  []update // not yet confirmed, oldest first
	lastID   int      // the update_id of the newest update queued
	calls    []Call
	topics   map[int64]map[int]bool // forum chats and their topics
	files    map[string][]byte
	nextMsg  int
	changed  chan struct{}
	webhook  string
	failSend []Failure
	voices   []VoiceFile

	// SendDelay is how long sendMessage takes to answer; the message is
	// in the chat from the start (see delivery.go).
	SendDelay time.Duration
	// SendDelays, when set, gives each sendMessage's delay instead.
	SendDelays func() time.Duration
	moved      map[int64]int64 // group → the supergroup it became
	restricted map[int64]bool
	posted     map[int64][]Message
}

// User is a Telegram user.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

// Chat is a Telegram chat.
type Chat struct {
	ID      int64  `json:"id"`
	Type    string `json:"type"` // private, group, supergroup
	Title   string `json:"title,omitempty"`
	IsForum bool   `json:"is_forum,omitempty"`
}

// Entity is a message entity.
type Entity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
	User   *User  `json:"user,omitempty"`
}

// update is one queued update.
type update struct {
	id  int
	raw json.RawMessage
}

// Message is a Telegram message.
type Message struct {
	MessageID int `json:"message_id"`
	// MessageThreadID and IsTopicMessage mark a message of a forum topic
	// (telegram-bot-api Client.cpp JsonMessage: message_thread_id is the
	// forum topic's id; is_topic_message when the message is in a topic).
	MessageThreadID int             `json:"message_thread_id,omitempty"`
	IsTopicMessage  bool            `json:"is_topic_message,omitempty"`
	From            *User           `json:"from,omitempty"`
	Chat            Chat            `json:"chat"`
	Date            int64           `json:"date"`
	Text            string          `json:"text,omitempty"`
	Entities        []Entity        `json:"entities,omitempty"`
	ReplyTo         *Message        `json:"reply_to_message,omitempty"`
	Photo           []PhotoSize     `json:"photo,omitempty"`
	Caption         string          `json:"caption,omitempty"`
	Sticker         json.RawMessage `json:"sticker,omitempty"`
	Voice           json.RawMessage `json:"voice,omitempty"`
	Document        json.RawMessage `json:"document,omitempty"`
}

// PhotoSize is one size of a photo.
type PhotoSize struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int    `json:"file_size,omitempty"`
}

// Call is a method call the server received.
type Call struct {
	Method string
	Params map[string]string // JSON-valued fields (entities, reply_parameters) as their JSON text
	At     time.Time
}

// Failure makes the next sendMessage fail.
type Failure struct {
	Code        int
	Description string
	RetryAfter  int
}

func (s *Server) init() {
	if s.changed == nil {
		s.changed = make(chan struct{})
		s.files = map[string][]byte{}
		s.topics = map[int64]map[int]bool{}
		s.nextMsg = 500
	}
}

func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func ok(w http.ResponseWriter, result any) {
	reply(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

func fail(w http.ResponseWriter, code int, desc string, params map[string]any) {
	body := map[string]any{"ok": false, "error_code": code, "description": desc}
	if params != nil {
		body["parameters"] = params
	}
	reply(w, code, body)
}

// params reads a request's parameters in any of the three encodings.
func params(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range r.URL.Query() {
		out[k] = v[0]
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "multipart/form-data":
		if err := r.ParseMultipartForm(8 << 20); err != nil {
			if strings.Contains(err.Error(), "EOF") {
				return out, nil // an empty form (a method without parameters), which the Bot API accepts
			}
			return nil, err
		}
		for k, v := range r.MultipartForm.Value {
			out[k] = v[0]
		}
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		for k, v := range r.PostForm {
			out[k] = v[0]
		}
	case "application/json":
		var m map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			return nil, err
		}
		for k, v := range m {
			var s string
			if json.Unmarshal(v, &s) == nil {
				out[k] = s
			} else {
				out[k] = string(v)
			}
		}
	}
	return out, nil
}

// ServeHTTP serves /bot<token>/<method> and /file/bot<token>/<path>.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rest, isFile := strings.CutPrefix(r.URL.Path, "/file/bot"); isFile {
		tok, path, _ := strings.Cut(rest, "/")
		s.mu.Lock()
		data, found := s.files[path]
		s.mu.Unlock()
		if tok != s.Token || !found {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
		return
	}
	rest, _ := strings.CutPrefix(r.URL.Path, "/bot")
	tok, method, found := strings.Cut(rest, "/")
	if !found {
		fail(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	if tok != s.Token {
		fail(w, http.StatusUnauthorized, "Unauthorized", nil)
		return
	}
	p, err := params(r)
	if err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: "+err.Error(), nil)
		return
	}
	s.mu.Lock()
	s.init()
	s.calls = append(s.calls, Call{Method: method, Params: p, At: time.Now()})
	s.notify()
	s.mu.Unlock()
	switch method {
	case "getMe":
		ok(w, s.Bot)
	case "deleteWebhook":
		s.mu.Lock()
		s.webhook = ""
		s.mu.Unlock()
		ok(w, true)
	case "setWebhook":
		s.mu.Lock()
		s.webhook = p["url"]
		s.mu.Unlock()
		ok(w, true)
	case "getUpdates":
		s.getUpdates(w, r, p)
	case "sendMessage":
		s.sendMessage(w, p)
	case "sendVoice":
		s.sendVoice(w, r, p)
	case "sendChatAction":
		if p["action"] == "" || p["chat_id"] == "" {
			fail(w, http.StatusBadRequest, "Bad Request: chat_id and action are required", nil)
			return
		}
		ok(w, true)
	case "getFile":
		id := p["file_id"]
		s.mu.Lock()
		data, found := s.files[id]
		s.mu.Unlock()
		if !found {
			fail(w, http.StatusBadRequest, "Bad Request: invalid file_id", nil)
			return
		}
		ok(w, map[string]any{"file_id": id, "file_unique_id": "u" + id, "file_size": len(data), "file_path": id})
	default:
		fail(w, http.StatusNotFound, "Not Found: method not found", nil)
	}
}

// getUpdates copies telegram-bot-api's Client::process_get_updates_query
// and do_get_updates (Client.cpp, commit 01a3679): updates with an id
// below offset are confirmed and forgotten for good; offset 0 starts at
// the oldest unconfirmed update; a negative offset -n forgets all but the
// last n; limit is 1–100 (default 100); a call with no update waits up to
// timeout seconds (capped here at 5: tests need no minute-long polls).
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]string) {
	s.mu.Lock()
	if s.webhook != "" {
		s.mu.Unlock()
		fail(w, http.StatusConflict, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", nil)
		return
	}
	s.mu.Unlock()
	offset, _ := strconv.Atoi(p["offset"])
	timeout, _ := strconv.Atoi(p["timeout"])
	limit, err := strconv.Atoi(p["limit"])
	if err != nil || limit <= 0 || limit > 100 {
		limit = 100
	}
	if timeout > 5 {
		timeout = 5
	}
	deadline := time.After(time.Duration(timeout) * time.Second)
	for {
		s.mu.Lock()
		s.init()
		s.confirm(offset)
		var out []json.RawMessage
		for _, u := range s.updates {
			if len(out) == limit {
				break
			}
			out = append(out, u.raw)
		}
		ch := s.changed
		s.mu.Unlock()
		if len(out) > 0 || timeout == 0 {
			if out == nil {
				out = []json.RawMessage{}
			}
			ok(w, out)
			return
		}
		select {
		case <-ch:
		case <-deadline:
			ok(w, []json.RawMessage{})
			return
		case <-r.Context().Done():
			return
		}
	}
}

// confirm forgets the updates an offset confirms. The caller holds s.mu.
func (s *Server) confirm(offset int) {
	switch {
	case offset < 0:
		if n := -offset; len(s.updates) > n {
			s.updates = s.updates[len(s.updates)-n:]
		}
	case offset > 0:
		i := 0
		for i < len(s.updates) && s.updates[i].id < offset {
			i++
		}
		s.updates = s.updates[i:]
	}
}

// Pending is how many updates wait unconfirmed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// AddTopic makes chat a forum with the topic thread (its
// message_thread_id).
func (s *Server) AddTopic(chat int64, thread int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if s.topics[chat] == nil {
		s.topics[chat] = map[int]bool{}
	}
	s.topics[chat][thread] = true
}

// MaxText is sendMessage's limit on a message's text after entity
// parsing, in characters: TDLib refuses longer text of a bot with "Message
// is too long" (tdlib/td td/telegram/MessageContent.cpp, counting code
// points with utf8_length against message_text_length_max, 4096 by
// default in OptionManager.cpp; commit 022d602), which telegram-bot-api
// sends as 400 "Bad Request: message is too long" (Client.cpp
// fail_query_with_error lower-cases the first letter; commit 01a3679).
const MaxText = 4096

// sendMessage copies the checks of telegram-bot-api's
// process_send_message_query: "Bad Request: message text is empty"
// (Client.cpp get_input_message_text), the length limit (MaxText), and a
// forum's message_thread_id: the General topic (1) or a topic that does
// not exist is "Bad Request: message thread not found" (Client.cpp
// check_reply_parameters / getForumTopic's error); the sent message
// carries message_thread_id and is_topic_message.
func (s *Server) sendMessage(w http.ResponseWriter, p map[string]string) {
	chat, err := strconv.ParseInt(p["chat_id"], 10, 64)
	if err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: chat not found", nil)
		return
	}
	text := p["text"]
	if text == "" {
		fail(w, http.StatusBadRequest, "Bad Request: message text is empty", nil)
		return
	}
	var ents []Entity
	if e := p["entities"]; e != "" {
		if err := json.Unmarshal([]byte(e), &ents); err != nil {
			fail(w, http.StatusBadRequest, "Bad Request: can't parse entities", nil)
			return
		}
	}
	if utf8.RuneCountInString(text) > MaxText {
		fail(w, http.StatusBadRequest, "Bad Request: message is too long", nil)
		return
	}
	thread, _ := strconv.Atoi(p["message_thread_id"])
	s.mu.Lock()
	s.init()
	if code, desc, params := s.refuse(chat); code != 0 {
		s.mu.Unlock()
		fail(w, code, desc, params)
		return
	}
	if topics, forum := s.topics[chat]; forum && thread > 0 && (thread == 1 || !topics[thread]) {
		s.mu.Unlock()
		fail(w, http.StatusBadRequest, "Bad Request: message thread not found", nil)
		return
	}
	if len(s.failSend) > 0 {
		f := s.failSend[0]
		s.failSend = s.failSend[1:]
		s.mu.Unlock()
		failWith(w, f)
		return
	}
	s.nextMsg++
	m := Message{MessageID: s.nextMsg, From: &s.Bot, Chat: Chat{ID: chat}, Date: time.Now().Unix(), Text: text, Entities: ents}
	if _, forum := s.topics[chat]; forum && thread > 1 {
		m.MessageThreadID, m.IsTopicMessage = thread, true
	}
	s.post(m)
	delay := s.SendDelay
	if s.SendDelays != nil {
		delay = s.SendDelays()
	}
	s.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay) // a slow answer: the message is posted already
	}
	ok(w, m)
}

// failWith answers a queued failure; a 429 as telegram-bot-api's
// Query::set_retry_after_error does (Query.cpp, commit 01a3679):
// "Too Many Requests: retry after N" with parameters.retry_after.
func failWith(w http.ResponseWriter, f Failure) {
	var extra map[string]any
	desc := f.Description
	if f.Code == http.StatusTooManyRequests {
		if f.RetryAfter <= 0 {
			f.RetryAfter = 1
		}
		desc = fmt.Sprintf("Too Many Requests: retry after %d", f.RetryAfter)
	}
	if f.RetryAfter > 0 {
		extra = map[string]any{"retry_after": f.RetryAfter}
	}
	fail(w, f.Code, desc, extra)
}

// FailSend makes the next sendMessage fail.
func (s *Server) FailSend(f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failSend = append(s.failSend, f)
}

// Push queues an update (its update_id is set) and returns the id.
func (s *Server) Push(m Message) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if m.MessageID == 0 {
		s.nextMsg++
		m.MessageID = s.nextMsg
	}
	if m.Date == 0 {
		m.Date = time.Now().Unix()
	}
	id := s.nextUpdate()
	b, _ := json.Marshal(map[string]any{"update_id": id, "message": m})
	s.updates = append(s.updates, update{id: id, raw: b})
	s.notify()
	return m.MessageID
}

// PushRaw queues an update as it is (malformed ones included).
func (s *Server) PushRaw(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	s.updates = append(s.updates, update{id: s.nextUpdate(), raw: b})
	s.notify()
}

// nextUpdate is the next update_id. The caller holds s.mu.
func (s *Server) nextUpdate() int {
	if s.lastID == 0 {
		s.lastID = max(s.FirstUpdateID, 1) - 1
	}
	s.lastID++
	return s.lastID
}

// AddFile makes a file downloadable through getFile.
func (s *Server) AddFile(id string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	s.files[id] = data
}

// Calls returns the calls so far (of the given methods, or all).
func (s *Server) Calls(methods ...string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if len(methods) == 0 || slices.Contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls waits for n calls of the methods.
func (s *Server) WaitCalls(ctx context.Context, n int, methods ...string) ([]Call, error) {
	for {
		s.mu.Lock()
		s.init()
		ch := s.changed
		s.mu.Unlock()
		if got := s.Calls(methods...); len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Calls(methods...), fmt.Errorf("waiting for %d %v: %w", n, methods, ctx.Err())
		}
	}
}

// Form encodes params as the Bot API's form body (for tests that call the
// server directly).
func Form(p map[string]string) url.Values {
	v := url.Values{}
	for k, x := range p {
		v.Set(k, x)
	}
	return v
}
