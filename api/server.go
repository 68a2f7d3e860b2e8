package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/metrics"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
	"github.com/cyan-agent/cyan/tts"
	"github.com/cyan-agent/cyan/turn"
)

// Agent is main-virtual as the API uses it: it runs a turn for a message,
// keeps the last prompt packet of each channel, and has a name. Declared
// here, where it is consumed, so the API depends only on the turn's values
// (package turn), not on main-virtual.
type Agent interface {
	Turn(ctx context.Context, in turn.Incoming, l turn.Listener) (*turn.Result, error)
	// TurnOnce is Turn for a message named by an idempotency key: a retry
	// stores nothing and gets the first answer.
	TurnOnce(ctx context.Context, in turn.Incoming, key string, l turn.Listener) (*turn.Result, error)
	LastTrace(channel string) (*turn.Trace, error)
	AgentName() string
}

// Options configure New.
type Options struct {
	Agent Agent
	Store *store.Store
	// Memory serves /api/v1/memory; nil leaves those routes out.
	Memory *memory.Memory
	// Observers serves /api/v1/observers; nil leaves it out.
	Observers Observers
	// Tools, Extras and MCP serve the tool and approval routes; nil
	// leaves those routes answering 503.
	Tools  *tools.Registry
	Extras *tools.Extras
	MCP    *tools.MCPManager
	// Events is the event log behind /api/v1/events, objects, relations and
	// theories; nil answers those routes with 503.
	Events *events.Log
	// Traces is the ring of generate traces (nil: none kept).
	Traces *generate.Traces
	// Token, when set, is required on every route a Door does not open:
	// as "Authorization: Bearer <token>", or as the session cookie the page
	// gets from POST /api/v1/session.
	Token string
	// AllowedOrigins are the web origins besides the daemon's own whose
	// pages may call the API (api.allowed_origins).
	AllowedOrigins []string
	// Doors open paths that need no token or check their own (see Door).
	Doors []Door
	// Mount serves other parts' handlers behind the guard, by path (a path
	// ending in "/" takes everything below it): the chat bridges' OneBot
	// WebSocket and Telegram webhooks, which open their doors in Doors.
	Mount map[string]http.Handler
	// CheckHost turns on the DNS-rebinding check: the Host header must name
	// a loopback host or one of AllowedHosts.
	CheckHost    bool
	AllowedHosts []string
	MaxBodyBytes int64
	Version      string
	Logger       *slog.Logger // nil: discard
	Now          func() time.Time
	// Recall answers /api/v1/recall (nil: the route says it is not running).
	Recall *recall.Index
	// Metrics serves GET /metrics and times the recalls (nil: no route).
	Metrics *metrics.Metrics
	// Bridges serves GET /api/v1/bridges (nil: an empty list).
	Bridges Bridges
	// Parts and Components are shown by /healthz (nil: left out).
	Parts      Parts
	Components Components
	// Model tells /healthz whether the model answered at its last call
	// (nil: not watched).
	Model Model
	// Voice serves /api/v1/speech (nil: those routes answer 503); it
	// speaks the voiced channels by following the journal itself.
	Voice *tts.Voice
	// Page serves the companion page (nil: no page) at PagePaths: "/" (its
	// index) and its files. Each of those paths, and nothing else, is a
	// Public door, so a browser loads the page before it has the session
	// cookie; the page then asks for the token (POST /api/v1/session).
	Page      http.Handler
	PagePaths []string
	// Persona tells the page the persona's name, colour and avatars.
	Persona func() PersonaInfo
	// ConfigFile is the daemon's configuration file (GET /api/v1/persona
	// names it, for `cyan persona import` and `use` to edit).
	ConfigFile string
	// LLM and LLMModel serve POST /api/v1/llm/check (nil: 404).
	LLM      llm.Client
	LLMModel string
	// PromptSize, when set, gives the size of a turn's prompt for the
	// check (system, tools and the full context budget), so cyan doctor
	// sets it against the server's window.
	PromptSize func(ctx context.Context) (tokens int, parts string)
}

// Server routes the HTTP API.
type Server struct {
	o       Options
	log     *slog.Logger
	mux     *http.ServeMux
	closing chan struct{} // closed by Close: the streams end
	closed  sync.Once
	doors   []Door
	session string // the session cookie's value
	// stopping ends when the daemon stops: the streamed turns that outlive
	// their clients end with it (StopTurns).
	stopping context.Context
	stop     context.CancelFunc
	turns    sync.WaitGroup
}

// StopTurns ends the streamed turns still running (their clients may have
// gone) and waits for them: call it once the HTTP server has shut down.
func (s *Server) StopTurns() {
	s.stop()
	s.turns.Wait()
}

// New checks the options and builds the routes.
func New(o Options) (*Server, error) {
	if o.Agent == nil || o.Store == nil {
		return nil, errors.New("api: agent and store are required")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, log: log, mux: http.NewServeMux(), closing: make(chan struct{}), doors: append(builtinDoors(), o.Doors...), session: sessionValue(o.Token)}
	s.stopping, s.stop = context.WithCancel(context.Background())
	for path, h := range o.Mount {
		s.mux.Handle(path, h)
	}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET "+SessionPath, s.getSession)
	s.mux.HandleFunc("POST "+SessionPath, s.postSession)
	s.mux.HandleFunc("DELETE "+SessionPath, s.deleteSession)
	s.mux.HandleFunc("POST /api/v1/messages", s.postMessage)
	s.mux.HandleFunc("GET /api/v1/messages", s.listMessages)
	s.mux.HandleFunc("POST /api/v1/greeting", s.greeting)
	s.mux.HandleFunc("GET /api/v1/trace/last", s.lastTrace)
	if o.Memory != nil {
		s.mux.HandleFunc("GET /api/v1/memory", s.listMemory)
		s.mux.HandleFunc("GET /api/v1/memory/{id}", s.getMemory)
		s.mux.HandleFunc("DELETE /api/v1/memory/{id}", s.deleteMemory)
	}
	s.mux.HandleFunc("GET /api/v1/stream", s.stream)
	if o.Observers != nil {
		s.mux.HandleFunc("GET /api/v1/observers", s.listObservers)
		s.mux.HandleFunc("POST /api/v1/observers/{name}/run", s.callObserver)
	}
	s.mux.HandleFunc("GET /api/v1/tools", s.listTools)
	s.mux.HandleFunc("POST /api/v1/tools/{name}/run", s.runTool)
	s.mux.HandleFunc("POST /api/v1/tools/{name}/check", s.checkTool)
	s.mux.HandleFunc("GET /api/v1/approvals", s.listApprovals)
	s.mux.HandleFunc("POST /api/v1/approvals/{id}", s.answerApproval)
	s.mux.HandleFunc("GET /api/v1/events", s.listEvents)
	s.mux.HandleFunc("POST /api/v1/events/rollup", s.rollup)
	s.mux.HandleFunc("POST /api/v1/events/build", s.buildHistory)
	s.mux.HandleFunc("GET /api/v1/objects", s.listObjects)
	s.mux.HandleFunc("POST /api/v1/objects/{id}/blocks/{block}/confirm", s.confirmBlock)
	s.mux.HandleFunc("GET /api/v1/relations", s.listRelations)
	s.mux.HandleFunc("GET /api/v1/theories", s.listTheories)
	s.mux.HandleFunc("GET /api/v1/traces", s.listTraces)
	s.mux.HandleFunc("GET /api/v1/traces/{id}", s.getTrace)
	s.mux.HandleFunc("POST /api/v1/recall", s.recall)
	s.mux.HandleFunc("GET /api/v1/recall/status", s.recallStatus)
	s.mux.HandleFunc("POST /api/v1/import", s.importMessages)
	s.mux.HandleFunc("POST /api/v1/backup", s.backup)
	s.mux.HandleFunc("GET /api/v1/backup", postOnly("a backup"))
	if o.Metrics != nil {
		s.mux.Handle("GET /metrics", o.Metrics.Handler())
	}
	s.mux.HandleFunc("POST /api/v1/export", s.export)
	s.mux.HandleFunc("GET /api/v1/export", postOnly("an export"))
	s.mux.HandleFunc("GET /api/v1/bridges", s.listBridges)
	s.mux.HandleFunc("POST /api/v1/speech", s.speech)
	s.mux.HandleFunc("GET /api/v1/speech/{key}", s.speechAudio)
	s.mux.HandleFunc("PUT /api/v1/speech/actions", s.speechActions)
	s.mux.HandleFunc("GET /api/v1/persona", s.personaInfo)
	s.mux.HandleFunc("POST /api/v1/llm/check", s.llmCheck)
	s.mux.HandleFunc("GET /api/v1/persona/avatar/{file}", s.personaAvatar)
	s.mux.HandleFunc("GET /api/v1/persona/avatar.vrm", s.personaVRM)
	if o.Page != nil {
		if err := s.routePage(); err != nil {
			return nil, err
		}
	}
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s; see docs/http-api.md for the API", r.Method, r.URL.Path))
	})
	return s, nil
}

// routePage routes each of the page's paths to it and opens its door.
func (s *Server) routePage() error {
	if len(s.o.PagePaths) == 0 {
		return errors.New("api: the page has no paths (PagePaths)")
	}
	for _, p := range s.o.PagePaths {
		if !strings.HasPrefix(p, "/") || p != "/" && (strings.HasSuffix(p, "/") || strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/v1/")) {
			return fmt.Errorf("api: the page's path %q is not a file of its own; a page path is \"/\" or a file outside /api/ and /v1/", p)
		}
		pattern := "GET " + p
		if p == "/" {
			pattern = "GET /{$}"
		}
		s.mux.Handle(pattern, s.o.Page)
		s.doors = append(s.doors, Door{Path: p, Access: Public})
	}
	return nil
}

// ServeHTTP recovers panics, applies the guard (guard.go) and routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("handler panic", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			writeError(w, http.StatusInternalServerError, "internal", "internal error; the daemon's log has the details")
		}
	}()
	if !s.guard(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	return slices.ContainsFunc(s.o.AllowedHosts, func(a string) bool { return strings.EqualFold(a, host) })
}

// errorBody is the JSON shape of every error.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	// MessageID is the stored incoming message, when the failure came
	// after it was kept.
	MessageID string `json:"message_id,omitempty"`
	// RetryAfter is, for a 429, the seconds until the limit lifts (also
	// the Retry-After header).
	RetryAfter int `json:"retry_after,omitempty"`
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, errorBody{Error: errorDetail{Message: msg, Type: typ}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeBody reads a JSON body into v, with errors a caller can act on.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	return decode(w, r, v, false)
}

// decodeStrict is decodeBody refusing fields v does not have, for requests
// where an unknown field may be a claim ("owner": true) that must not pass
// silently.
func decodeStrict(w http.ResponseWriter, r *http.Request, v any) bool {
	return decode(w, r, v, true)
}

func decode(w http.ResponseWriter, r *http.Request, v any, strict bool) bool {
	dec := json.NewDecoder(r.Body)
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large",
				fmt.Sprintf("the body is over %d bytes; send less (or raise api.max_body_bytes)", tooBig.Limit))
			return false
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, "request_timeout",
				"the body did not arrive within api.read_timeout; send it at once (or raise api.read_timeout)")
			return false
		}
		writeError(w, http.StatusBadRequest, "invalid_request", "the body is not valid JSON: "+err.Error())
		return false
	}
	return true
}

// storeUnavailable answers a write the store refused because of its disk
// (507 Insufficient Storage: full) or its data dir (503: removed), with the
// store's message naming the disk and folder, and reports whether it did.
func storeUnavailable(w http.ResponseWriter, err error, kept string) bool {
	switch {
	case errors.Is(err, store.ErrDiskFull):
		writeError(w, http.StatusInsufficientStorage, "disk_full", kept+errMessage(err))
	case errors.Is(err, store.ErrDataDirGone):
		writeError(w, http.StatusServiceUnavailable, "data_dir_gone", kept+errMessage(err))
	default:
		return false
	}
	return true
}

// errMessage is the innermost readable part of a store error: the
// *SpaceError or *GoneError's own words, without the wrapping prefixes.
func errMessage(err error) string {
	var se *store.SpaceError
	var ge *store.GoneError
	switch {
	case errors.As(err, &se):
		return se.Error()
	case errors.As(err, &ge):
		return ge.Error()
	}
	return err.Error()
}
