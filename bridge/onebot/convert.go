package onebot

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/bridge"
)

// toMessage turns a message event into the bridge's form. fetch downloads
// media URLs.
func toMessage(ev *Event, fetch func(ctx context.Context, url string, max int64) ([]byte, error)) *bridge.Message {
	return toMessageWith(ev, fetch, nil)
}

// toMessageWith is toMessage; forward, when set, fetches a forward's
// messages by its id (get_forward_msg) when the event gives only the id.
func toMessageWith(ev *Event, fetch func(ctx context.Context, url string, max int64) ([]byte, error), forward func(id string) []node) *bridge.Message {
	m := &bridge.Message{ID: string(ev.MessageID), From: bridge.User{ID: string(ev.UserID)}}
	if ev.MessageType == "group" {
		m.Chat = bridge.Chat{Kind: bridge.Group, ID: string(ev.GroupID)}
	} else {
		m.Chat = bridge.Chat{Kind: bridge.Private, ID: string(ev.UserID)}
	}
	m.From.Name = strings.TrimSpace(ev.Sender.Card)
	if m.From.Name == "" {
		m.From.Name = strings.TrimSpace(ev.Sender.Nickname)
	}
	if ev.Anonymous != nil && ev.Anonymous.Name != "" {
		m.From.Name = ev.Anonymous.Name + " (anonymous)"
	}
	if ev.Time > 0 {
		m.Time = time.Unix(ev.Time, 0)
	}
	for _, s := range ev.Message {
		if s.Type == "forward" {
			m.Parts = append(m.Parts, forwardPart(s, forward))
			continue
		}
		m.Parts = append(m.Parts, toPart(s, fetch))
	}
	return m
}

// forwardPart is a forward's messages as text, bounded: from the
// segment's content, else fetched by its id.
func forwardPart(s Segment, fetch func(id string) []node) bridge.Part {
	nodes := forwardNodes([]byte(s.Data["content"]))
	if len(nodes) == 0 && fetch != nil && s.Data["id"] != "" {
		nodes = fetch(s.Data["id"])
	}
	if len(nodes) == 0 {
		return bridge.Part{Kind: bridge.PartOther, Text: "forwarded messages, not readable"}
	}
	return bridge.Part{Kind: bridge.PartOther, Text: "forwarded messages:\n" + forwardText(nodes, fetch)}
}

func toPart(s Segment, fetch func(ctx context.Context, url string, max int64) ([]byte, error)) bridge.Part {
	d := s.Data
	media := func() *bridge.Media {
		md := &bridge.Media{Name: d["file"], URL: d["url"]}
		if md.URL == "" && (strings.HasPrefix(md.Name, "http://") || strings.HasPrefix(md.Name, "https://")) {
			md.URL = md.Name
		}
		if n, err := strconv.ParseInt(d["file_size"], 10, 64); err == nil {
			md.Size = n
		}
		if u := md.URL; u != "" && fetch != nil {
			md.Fetch = func(ctx context.Context, max int64) ([]byte, error) { return fetch(ctx, u, max) }
		}
		return md
	}
	switch s.Type {
	case "text":
		return bridge.Part{Kind: bridge.PartText, Text: d["text"]}
	case "at":
		return bridge.Part{Kind: bridge.PartMention, UserID: d["qq"], Text: strings.TrimPrefix(d["name"], "@")}
	case "reply":
		return bridge.Part{Kind: bridge.PartReply, MessageID: d["id"]}
	case "face":
		return bridge.Part{Kind: bridge.PartFace, Text: d["id"]}
	case "image":
		if d["sub_type"] == "1" || strings.Contains(d["summary"], "表情") {
			return bridge.Part{Kind: bridge.PartSticker, Text: strings.Trim(d["summary"], "[]"), Media: media()}
		}
		return bridge.Part{Kind: bridge.PartImage, Media: media()}
	case "mface":
		return bridge.Part{Kind: bridge.PartSticker, Text: strings.Trim(d["summary"], "[]")}
	case "record":
		return bridge.Part{Kind: bridge.PartVoice, Media: media()}
	case "video":
		return bridge.Part{Kind: bridge.PartOther, Text: "video"}
	case "file":
		// NapCat: file is the name, file_size its size (go-cqhttp: name)
		return bridge.Part{Kind: bridge.PartOther, Text: fileText("file", firstOf(d["name"], d["file"]), d["file_size"])}
	case "onlinefile":
		kind := "online file"
		if d["isDir"] == "true" {
			kind = "online folder"
		}
		return bridge.Part{Kind: bridge.PartOther, Text: fileText(kind, d["fileName"], d["fileSize"])}
	case "forward":
		return forwardPart(s, nil)
	case "markdown":
		if t := strings.TrimSpace(d["content"]); t != "" {
			return bridge.Part{Kind: bridge.PartText, Text: clipText(t, 4000)}
		}
		return bridge.Part{Kind: bridge.PartOther, Text: "an empty markdown message"}
	case "json", "miniapp":
		return bridge.Part{Kind: bridge.PartOther, Text: cardText("card", d["data"])}
	case "share":
		return bridge.Part{Kind: bridge.PartOther, Text: strings.TrimSpace("link: " + clipText(d["title"], cardField) + " " + d["url"])}
	case "xml", "contact", "location", "music":
		return bridge.Part{Kind: bridge.PartOther, Text: "a " + s.Type + " card"}
	case "poke", "shake", "dice", "rps":
		return bridge.Part{Kind: bridge.PartOther, Text: s.Type}
	}
	return bridge.Part{Kind: bridge.PartOther, Text: s.Type}
}

// toSegments renders an outgoing message as segments.
func toSegments(m bridge.Outgoing) []Segment {
	var out []Segment
	for _, p := range m.Parts {
		switch p.Kind {
		case bridge.PartText:
			if p.Text != "" {
				out = append(out, Segment{Type: "text", Data: map[string]string{"text": p.Text}})
			}
		case bridge.PartMention:
			out = append(out, Segment{Type: "at", Data: map[string]string{"qq": p.UserID}})
		case bridge.PartReply:
			// a reply segment leads the message
			out = append([]Segment{{Type: "reply", Data: map[string]string{"id": p.MessageID}}}, out...)
		}
	}
	return out
}

// httpFetch downloads a media URL, at most max bytes.
func httpFetch(client *http.Client) func(ctx context.Context, url string, max int64) ([]byte, error) {
	return func(ctx context.Context, url string, max int64) ([]byte, error) {
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			return nil, fmt.Errorf("not an http(s) URL")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		if max <= 0 {
			max = 32 << 20
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
		if err != nil {
			return nil, err
		}
		if int64(len(b)) > max {
			return nil, fmt.Errorf("over %d bytes", max)
		}
		return b, nil
	}
}
