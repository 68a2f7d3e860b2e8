package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// defaultChannel is the channel of cyan chat, send and history when
// --channel is not given.
const defaultChannel = "terminal"

func sendCmd(f *flags) run {
	channel := f.String("channel", defaultChannel, "the `channel` (conversation) to send to")
	user := f.String("user", "", "the speaker's `name` (default: none; the daemon says \"user\")")
	asJSON := f.json()
	return func(io IO, pos []string) error {
		text := strings.Join(pos, " ")
		if strings.TrimSpace(text) == "" {
			return &usageError{msg: "the message text is empty; e.g. cyan send --channel home 'hello'"}
		}
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var out struct {
			MessageID string   `json:"message_id"`
			Replies   []string `json:"replies"`
			Warning   string   `json:"warning,omitempty"`
		}
		if err := c.do("POST", "/api/v1/messages", map[string]any{"channel": *channel, "user": speaker(io, *user), "text": text}, &out); err != nil {
			return err
		}
		if out.Replies == nil {
			out.Replies = []string{}
		}
		if *asJSON {
			if err := printJSON(io.Stdout, out); err != nil {
				return err
			}
		} else {
			for _, r := range out.Replies {
				fmt.Fprintln(io.Stdout, r)
			}
		}
		if out.Warning != "" {
			fmt.Fprintln(io.Stderr, "warning:", out.Warning)
		}
		if len(out.Replies) == 0 {
			// As "cyan chat" says "(no reply)": a script must not read
			// silence as an answer.
			fmt.Fprintf(io.Stderr, "cyan send: (no reply) the companion said nothing to message %s; 'cyan trace ls --channel' shows why\n", out.MessageID)
			return &reported{code: exitFailed}
		}
		return nil
	}
}

// speaker is --user, or "" : the terminal sends no name of its own
// making, and never a chat-app id, so it is the owner through the "local"
// owner entry (permissions.owners), whoever runs it. A name it sends is
// how the companion calls you, and decides ownership only where owners
// lists that bare name.
func speaker(_ IO, user string) string { return user }

func chatCmd(f *flags) run {
	channel := f.String("channel", defaultChannel, "the `channel` (conversation) to chat in")
	user := f.String("user", "", "your speaker `name` (default: none; the daemon says \"user\")")
	return func(io IO, _ []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var health struct {
			OK bool `json:"ok"`
		}
		if err := c.do("GET", "/healthz", nil, &health); err != nil {
			return err
		}
		who := speaker(io, *user)
		interactive := isTerminal(io.Stdin)
		out := &lockedWriter{w: io.Stdout}
		io.Stdout = out
		if interactive {
			as := who
			if as == "" {
				as = "you (the local owner)"
			}
			fmt.Fprintf(io.Stdout, "Chatting in channel %q as %s. Type /quit (or Ctrl-D) to leave.\n", *channel, as)
		}
		stop := followProactive(c, *channel, out, interactive)
		defer stop()
		sc := bufio.NewScanner(io.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for {
			if interactive {
				fmt.Fprint(io.Stdout, "> ")
			}
			if !sc.Scan() {
				if interactive {
					fmt.Fprintln(io.Stdout)
				}
				return sc.Err()
			}
			line := strings.TrimSpace(sc.Text())
			switch line {
			case "":
				continue
			case "/quit", "/exit":
				return nil
			}
			if err := chatTurn(io, c, *channel, who, line); err != nil {
				fmt.Fprintln(io.Stderr, "error:", err)
			}
		}
	}
}

// chatTurn sends one line and prints the reply as it streams.
func chatTurn(io IO, c *client, channel, user, text string) error {
	resp, err := c.send("POST", "/api/v1/messages", map[string]any{"channel": channel, "user": user, "text": text, "stream": true}, "text/event-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	printed := false
	err = readSSE(resp.Body, func(ev sseEvent) error {
		switch ev.name {
		case "delta":
			var d struct {
				Text string `json:"text"`
			}
			if json.Unmarshal([]byte(ev.data), &d) == nil {
				fmt.Fprint(io.Stdout, d.Text)
				printed = true
			}
		case "break":
			fmt.Fprintln(io.Stdout)
		case "cut":
			fmt.Fprint(io.Stdout, " …")
			fmt.Fprintln(io.Stderr, "\n(the answer was cut off: the model's server stopped mid-answer)")
		case "error":
			var e struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			_ = json.Unmarshal([]byte(ev.data), &e)
			return fmt.Errorf("%s", e.Error.Message)
		case "done":
			var d struct {
				Replies []string `json:"replies"`
				Warning string   `json:"warning"`
			}
			_ = json.Unmarshal([]byte(ev.data), &d)
			if !printed && len(d.Replies) == 0 {
				fmt.Fprint(io.Stdout, "(no reply)")
				printed = true
			}
			if d.Warning != "" {
				fmt.Fprintln(io.Stderr, "\nwarning:", d.Warning)
			}
		}
		return nil
	})
	if printed {
		fmt.Fprintln(io.Stdout)
	}
	return err
}

// isTerminal reports whether x (a reader or writer) is a terminal: a
// person reads it or types into it. /dev/null, pipes and files are not.
func isTerminal(x any) bool {
	f, ok := x.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// lockedWriter lets the chat loop and the proactive-message listener write
// to the terminal without tearing each other's lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// followProactive shows the messages the companion sends on its own while
// the chat is open (GET /api/v1/stream); answers to the chat's own lines
// are printed by the chat loop and skipped here.
func followProactive(c *client, channel string, out io.Writer, interactive bool) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	var body io.Closer
	var mu sync.Mutex
	go func() {
		resp, err := c.send("GET", "/api/v1/stream"+query("channel", channel), nil, "text/event-stream")
		if err != nil {
			return
		}
		mu.Lock()
		body = resp.Body
		mu.Unlock()
		select {
		case <-done:
			resp.Body.Close()
			return
		default:
		}
		_ = readSSE(resp.Body, func(ev sseEvent) error {
			if ev.name != "message" {
				return nil
			}
			var m struct {
				User      string `json:"user"`
				Text      string `json:"text"`
				Proactive bool   `json:"proactive"`
			}
			if json.Unmarshal([]byte(ev.data), &m) != nil || !m.Proactive {
				return nil
			}
			prompt := ""
			if interactive {
				prompt = "> "
			}
			fmt.Fprintf(out, "\r%s: %s\n%s", m.User, m.Text, prompt)
			return nil
		})
	}()
	return func() {
		once.Do(func() {
			close(done)
			mu.Lock()
			if body != nil {
				body.Close()
			}
			mu.Unlock()
		})
	}
}
