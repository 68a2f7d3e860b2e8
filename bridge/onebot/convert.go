package onebot

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path"
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
		md := &bridge.Media{Name: mediaName(d["file"]), URL: d["url"]}
		if md.URL == "" && (strings.HasPrefix(d["file"], "http://") || strings.HasPrefix(d["file"], "https://")) {
			md.URL = d["file"]
		}
		if n, err := strconv.ParseInt(d["file_size"], 10, 64); err == nil {
			md.Size = n
		}
		switch {
		case md.URL != "" && fetch != nil:
			u := md.URL
			md.Fetch = func(ctx context.Context, max int64) ([]byte, error) { return fetch(ctx, u, max) }
		case strings.HasPrefix(d["file"], "base64://"):
			// Inline data the implementation sent (LLOneBot, NapCat with
			// base64 images): no network; bounded like a download.
			enc := strings.TrimPrefix(d["file"], "base64://")
			md.Fetch = func(_ context.Context, max int64) ([]byte, error) { return decodeInline(enc, max) }
		}
		// A "file://" path, or a bare local path, is never read: the
		// event names it, not the owner.
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
		case bridge.PartVoice:
			// a record is a message of its own; its file inline
			if len(p.Audio) > 0 {
				out = append(out, Segment{Type: "record", Data: map[string]string{"file": "base64://" + base64.StdEncoding.EncodeToString(p.Audio)}})
			}
		}
	}
	return out
}

// mediaName is how an image's "file" is named in the stored text: a file
// name or id as given, the last part of a URL's path, nothing for inline
// data — never an address.
func mediaName(file string) string {
	switch {
	case strings.HasPrefix(file, "base64://"):
		return ""
	case strings.Contains(file, "://"):
		u, err := url.Parse(file)
		if err != nil {
			return ""
		}
		name := path.Base(u.Path)
		if name == "." || name == "/" {
			return ""
		}
		return name
	}
	return file
}

// decodeInline decodes a "base64://" image, at most max bytes (0: 32 MiB).
func decodeInline(enc string, max int64) ([]byte, error) {
	if max <= 0 {
		max = 32 << 20
	}
	if int64(base64.StdEncoding.DecodedLen(len(enc))) > max+3 {
		return nil, fmt.Errorf("over %d bytes", max)
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, errors.New("inline image: not base64")
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("over %d bytes", max)
	}
	return b, nil
}

// policyFetch downloads a media URL through the fetch policy, at most
// max bytes.
func policyFetch(p *bridge.FetchPolicy) func(ctx context.Context, url string, max int64) ([]byte, error) {
	client := p.Client()
	return func(ctx context.Context, url string, max int64) ([]byte, error) {
		return p.Fetch(ctx, client, url, max)
	}
}
