package cmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/ttstest"
	"github.com/cyan-agent/cyan/llm"
)

// A GPT-SoVITS voice asked for ogg speaks: doctor plays no joined file, it
// checks each segment is audio a page plays.
func TestDoctorAcceptsOgg(t *testing.T) {
	if _, err := exec.LookPath("sox"); err != nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatal("sox makes the fake's ogg and CYAN_REQUIRE_TOOLS=1: install sox")
		}
		t.Skip("sox makes the fake's ogg; it is not installed")
	}
	fake := &ttstest.GPTSoVITS{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	for _, format := range []string{"ogg", "wav"} {
		yaml := "tts:\n  provider: gpt-sovits\n  format: " + format + "\n  base_url: " + srv.URL + "\n  refs: {neutral: {audio: /r/calm.wav, text: 你好呀, lang: all_zh}}\n"
		cfg, err := loadConfig(IO{Env: func(k string) string { return sayEnv(t, yaml)[k] }})
		if err != nil {
			t.Fatal(err)
		}
		c := checkVoice(cfg, 20*time.Second)
		if !c.ok || !strings.Contains(c.msg, "2 segments") || !strings.Contains(c.msg, format) {
			t.Errorf("%s: %+v", format, c)
		}
	}
	reqs := fake.Requests()
	if *reqs[0].MediaType != "ogg" || *reqs[0].PromptLang != "all_zh" {
		t.Errorf("the request: media %s, prompt_lang %s", *reqs[0].MediaType, *reqs[0].PromptLang)
	}
}

// With a daemon running, the model is checked through it (its own
// settings), not with the shell's.
func TestDoctorChecksTheModelThroughTheDaemon(t *testing.T) {
	fake := new(llmtest.Server)
	fake.Models = []string{"daemon-model"}
	llmSrv := httptest.NewServer(fake)
	defer llmSrv.Close()
	client, err := llm.New(llm.Options{BaseURL: llmSrv.URL + "/v1", Model: "daemon-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	daemon := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/api/v1/llm/check" {
			http.NotFound(w, r)
			return
		}
		checked++
		_ = json.NewEncoder(w).Encode(llm.Check(r.Context(), client, "daemon-model"))
	}))
	defer daemon.Close()
	env := sayEnv(t, "")
	env["CYAN_ADDR"] = strings.TrimPrefix(daemon.URL, "http://")
	env["CYAN_LLM_BASE_URL"] = "http://127.0.0.1:1/v1" // the shell's settings reach nothing
	env["CYAN_LLM_MODEL"] = "shell-model"
	cfg, err := loadConfig(IO{Env: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	cs := checkLLM(cfg, 5*time.Second)
	if checked != 1 || len(cs) != 5 || !cs[0].ok || !cs[1].ok || !strings.Contains(cs[1].msg, "through the running daemon: daemon-model answers") {
		t.Fatalf("checks %+v", cs)
	}
	if !cs[1].warn || !strings.Contains(cs[1].msg, `this shell's settings name "shell-model"`) {
		t.Errorf("the differing model is not told: %+v", cs[1])
	}
	daemon.Close() // no daemon: the shell's settings, which fail here
	cs = checkLLM(cfg, 2*time.Second)
	if cs[0].ok || strings.Contains(cs[0].msg, "daemon") {
		t.Errorf("without a daemon: %+v", cs)
	}
}

// A configured emotion reference the GPT-SoVITS server does not have is
// named, with the neutral voice said to take its place; a missing neutral
// one is a failure that says which file to put where.
func TestDoctorNamesAFailingReference(t *testing.T) {
	fake := &ttstest.GPTSoVITS{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	yaml := "tts:\n  provider: gpt-sovits\n  base_url: " + srv.URL + "\n  refs:\n" +
		"    neutral: {audio: /r/calm.wav, text: 你好呀, lang: all_zh}\n" +
		"    happy: {audio: /r/happy.wav, text: 太好了, lang: all_zh}\n" +
		"    sad: {audio: /r/sad.wav, text: 唉, lang: all_zh}\n"
	cfg, err := loadConfig(IO{Env: func(k string) string { return sayEnv(t, yaml)[k] }})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		missing string
		ok      bool
		warn    bool
		msg     []string
		fix     []string
	}{
		{name: "all there", ok: true, msg: []string{"speaks (2 segments"}},
		{name: "an emotion's", missing: "/r/happy.wav", warn: true,
			msg: []string{"speaks (2 segments", "happy (/r/happy.wav)", "No such file", "fall back to the neutral voice"},
			fix: []string{"tts.refs", "the machine GPT-SoVITS runs on"}},
		{name: "the neutral one", missing: "/r/calm.wav",
			msg: []string{"does not speak", "the neutral reference (/r/calm.wav) fails", "every emotion falls back to it"},
			fix: []string{"tts.refs.neutral.audio", "/r/calm.wav", "the machine GPT-SoVITS runs on"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.Missing = map[string]bool{tt.missing: tt.missing != ""}
			c := checkVoice(cfg, 20*time.Second)
			if c.ok != tt.ok || c.warn != tt.warn {
				t.Fatalf("ok %v warn %v, want %v %v: %+v", c.ok, c.warn, tt.ok, tt.warn, c)
			}
			for _, m := range tt.msg {
				if !strings.Contains(c.msg, m) {
					t.Errorf("the message lacks %q: %s", m, c.msg)
				}
			}
			for _, m := range tt.fix {
				if !strings.Contains(c.fix, m) {
					t.Errorf("the fix lacks %q: %s", m, c.fix)
				}
			}
			if tt.ok && (strings.Contains(c.msg, "fall back") || c.fix != "") {
				t.Errorf("nothing is missing, yet: %+v", c)
			}
		})
	}
}
