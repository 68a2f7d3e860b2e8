package onebot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// QQ's rich segments as the model reads them, in the shapes NapCat gives
// (packages/napcat-onebot/api/msg.ts at commit af07479: arkElement →
// {"type":"json","data":{"data":"<the ark JSON string>"}}; markdownElement
// → {"type":"markdown","data":{"content":…}}; fileElement → {"type":
// "file","data":{"file":<name>,"file_id","file_size","url"}}; an online
// file → {"type":"onlinefile","data":{"msgId","elementId","fileName",
// "fileSize","isDir"}}; multiForwardMsgElement → {"type":"forward",
// "data":{"id":…,"content":[OB11Message…]}}, content only when NapCat
// parses forwards, else get_forward_msg by the id).

// Bounds of what a forward contributes to one message.
const (
	forwardMax   = 30   // messages read, all levels together
	forwardDepth = 3    // forwards inside forwards
	forwardBytes = 3000 // text kept
	cardField    = 160  // a card's title or description
)

// card reads a QQ ark card (a mini-app, a shared link, news, music, a
// contact): its title, description and link. NapCat puts the ark JSON as
// a string in data.data; some implementations give the object itself.
// ok is false when nothing readable is in it.
func card(data string) (title, desc, link string, ok bool) {
	data = strings.TrimSpace(data)
	var ark struct {
		App    string                     `json:"app"`
		Prompt string                     `json:"prompt"`
		Desc   string                     `json:"desc"`
		Meta   map[string]json.RawMessage `json:"meta"`
	}
	if json.Unmarshal([]byte(data), &ark) != nil {
		var s string
		if json.Unmarshal([]byte(data), &s) != nil || json.Unmarshal([]byte(s), &ark) != nil {
			return "", "", "", false
		}
	}
	// meta holds one object whose name says its kind: detail_1 (a mini
	// app), news, music, contact …
	for _, k := range []string{"detail_1", "news", "music", "contact", "video"} {
		if raw, found := ark.Meta[k]; found {
			title, desc, link = cardMeta(raw)
			break
		}
	}
	if title == "" && desc == "" && link == "" {
		for _, raw := range ark.Meta {
			if title, desc, link = cardMeta(raw); title != "" || link != "" {
				break
			}
		}
	}
	prompt := strings.TrimSpace(ark.Prompt)
	if title == "" {
		title, prompt = prompt, ""
	}
	if desc == "" && prompt != "" && !strings.Contains(prompt, title) {
		desc = prompt
	}
	if desc == title {
		desc = ""
	}
	title, desc = clipText(title, cardField), clipText(desc, cardField)
	return title, desc, clipText(link, 300), title != "" || link != ""
}

func cardMeta(raw json.RawMessage) (title, desc, link string) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return "", "", ""
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := m[k].(string); ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	title = str("title", "nickname", "tag")
	desc = str("desc", "contact")
	link = str("qqdocurl", "jumpUrl", "url", "musicUrl")
	if desc == title {
		desc = ""
	}
	if !strings.HasPrefix(link, "http://") && !strings.HasPrefix(link, "https://") {
		link = ""
	}
	return title, desc, link
}

// cardText is a card as the model reads it: "card: title — desc <link>".
func cardText(kind, data string) string {
	title, desc, link, ok := card(data)
	if !ok {
		return kind
	}
	s := kind + ": " + title
	if desc != "" {
		s += " — " + desc
	}
	if link != "" {
		s += " " + link
	}
	return s
}

// node is one message of a forward, whichever shape it came in.
type node struct {
	name string
	segs []Segment
}

// forwardNodes reads a forward's content: NapCat's OB11Message list
// ({"sender":{"nickname","card"},"user_id","message":[…] or "…"}), or the
// node segments go-cqhttp, LLOneBot and Lagrange give ({"type":"node",
// "data":{"nickname"|"name","user_id"|"uin","content"|"message":…}}).
func forwardNodes(raw []byte) []node {
	var items []json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(raw), &items) != nil {
		var wrap struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(raw, &wrap) != nil {
			return nil
		}
		items = wrap.Messages
	}
	var out []node
	for _, it := range items {
		var n struct {
			Type string `json:"type"`
			Data struct {
				Nickname string          `json:"nickname"`
				Name     string          `json:"name"`
				UserID   json.RawMessage `json:"user_id"`
				Uin      json.RawMessage `json:"uin"`
				Content  json.RawMessage `json:"content"`
				Message  json.RawMessage `json:"message"`
			} `json:"data"`
			Sender struct {
				Nickname string `json:"nickname"`
				Card     string `json:"card"`
			} `json:"sender"`
			UserID  json.RawMessage `json:"user_id"`
			Message json.RawMessage `json:"message"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(it, &n) != nil {
			continue
		}
		var nd node
		body := n.Message
		if n.Type == "node" {
			nd.name = firstOf(n.Data.Nickname, n.Data.Name, idText(n.Data.UserID), idText(n.Data.Uin))
			body = n.Data.Content
			if len(body) == 0 || string(body) == "null" || string(body) == "[]" {
				body = n.Data.Message
			}
		} else {
			nd.name = firstOf(strings.TrimSpace(n.Sender.Card), strings.TrimSpace(n.Sender.Nickname), idText(n.UserID))
			if len(body) == 0 || string(body) == "null" {
				body = n.Content
			}
		}
		if len(body) > 0 {
			nd.segs, _, _ = parseMessage(body)
		}
		out = append(out, nd)
	}
	return out
}

func idText(raw json.RawMessage) string {
	var id ID
	if json.Unmarshal(raw, &id) != nil {
		return ""
	}
	return string(id)
}

// forwardText renders a forward's nodes as lines "name: text", nested
// forwards indented, within the bounds; more is counted, not shown.
func forwardText(nodes []node, fetch func(id string) []node) string {
	var b strings.Builder
	budget := forwardMax
	var walk func(ns []node, depth int)
	walk = func(ns []node, depth int) {
		for i, n := range ns {
			if budget <= 0 || b.Len() >= forwardBytes {
				fmt.Fprintf(&b, "\n%s(%d more not shown)", strings.Repeat("  ", depth), len(ns)-i)
				return
			}
			budget--
			fmt.Fprintf(&b, "\n%s%s: ", strings.Repeat("  ", depth), orDash(n.name))
			for _, s := range n.segs {
				if s.Type == "forward" || s.Type == "node" {
					inner := forwardNodes([]byte(firstOf(s.Data["content"], s.Data["message"])))
					if len(inner) == 0 && fetch != nil && s.Data["id"] != "" && depth+1 < forwardDepth {
						inner = fetch(s.Data["id"])
					}
					if depth+1 >= forwardDepth || len(inner) == 0 {
						b.WriteString("[forwarded messages]")
						continue
					}
					b.WriteString("[forwarded messages:")
					walk(inner, depth+1)
					b.WriteString("]")
					continue
				}
				b.WriteString(segmentText(s))
			}
		}
	}
	walk(nodes, 0)
	s := b.String()
	if n := forwardBytes + 200; len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strings.TrimLeft(s, "\n")
}

// segmentText is one segment of a forwarded message as text.
func segmentText(s Segment) string {
	p := toPart(s, nil)
	switch p.Kind {
	case "text":
		return p.Text
	case "mention":
		return "@" + firstOf(p.Text, p.UserID)
	case "reply":
		return ""
	case "image":
		return "[an image]"
	case "voice":
		return "[voice message]"
	case "sticker":
		return "[sticker " + p.Text + "]"
	case "face":
		return "[face " + p.Text + "]"
	}
	return "[" + p.Text + "]"
}

func orDash(s string) string {
	if s == "" {
		return "someone"
	}
	return s
}

// fileText is a file as the model reads it: "file name (size)".
func fileText(kind, name, size string) string {
	s := kind
	if name = strings.TrimSpace(name); name != "" {
		s += " " + clipText(name, 120)
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(size), 10, 64); err == nil && n > 0 {
		s += " (" + humanSize(n) + ")"
	}
	return s
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// clipText cuts s to at most n bytes at a rune boundary, spaces folded.
func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
