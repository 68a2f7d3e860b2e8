package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// defaultUser is the speaker name of terminal commands.
func defaultUser(io IO) string {
	if u := io.Env("USER"); u != "" {
		return u
	}
	return "user"
}

func runSend(io IO, args []string) error {
	fs := newFlags(io, "send")
	channel := fs.String("channel", "terminal", "the `channel` (conversation) to send to")
	user := fs.String("user", defaultUser(io), "the speaker's `name`")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	text := strings.Join(pos, " ")
	if strings.TrimSpace(text) == "" {
		return &usageError{msg: "no message text; try: cyan send --channel home 'hello'"}
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	var out struct {
		MessageID string   `json:"message_id"`
		Replies   []string `json:"replies"`
		Warning   string   `json:"warning"`
	}
	if err := newClient(cfg).do("POST", "/api/v1/messages", map[string]any{"channel": *channel, "user": *user, "text": text}, &out); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(io.Stdout).Encode(out)
	}
	for _, r := range out.Replies {
		fmt.Fprintln(io.Stdout, r)
	}
	if out.Warning != "" {
		fmt.Fprintln(io.Stderr, "warning:", out.Warning)
	}
	return nil
}

func runChat(io IO, args []string) error {
	fs := newFlags(io, "chat")
	channel := fs.String("channel", "terminal", "the `channel` (conversation) to chat in")
	user := fs.String("user", defaultUser(io), "your speaker `name`")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	c := newClient(cfg)
	var health struct {
		OK bool `json:"ok"`
	}
	if err := c.do("GET", "/healthz", nil, &health); err != nil {
		return err
	}
	interactive := isTerminal(io.Stdin)
	if interactive {
		fmt.Fprintf(io.Stdout, "Chatting in channel %q as %s. Type /quit (or Ctrl-D) to leave.\n", *channel, *user)
	}
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
		if err := chatTurn(io, c, *channel, *user, line); err != nil {
			fmt.Fprintln(io.Stderr, "error:", err)
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

func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
