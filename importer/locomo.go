package importer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// Conversation is one LoCoMo sample: its turns as messages and its
// questions.
type Conversation struct {
	SampleID string
	Channel  string
	Messages []*store.Message
	QA       []Question
}

// Question is one LoCoMo question with its evidence turns (dia_ids,
// cleaned: "D:11:26" → "D11:26", "D8:6; D9:17" split, unreadable ones
// dropped).
type Question struct {
	Question string
	Answer   string
	Evidence []string
	Category int
}

type locomoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question string          `json:"question"`
		Answer   json.RawMessage `json:"answer"`
		Evidence []string        `json:"evidence"`
		Category int             `json:"category"`
	} `json:"qa"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var (
	sessionKey = regexp.MustCompile(`^session_(\d+)$`)
	// evidenceID finds a turn id anywhere in an evidence string: LoCoMo
	// writes "D8:6", joins several ("D8:6; D9:17"), and slips ("D:11:26",
	// "D30:05").
	evidenceID = regexp.MustCompile(`D:?\s*(\d+)\s*:\s*(\d+)`)
)

// LoCoMoTimeLayout is how LoCoMo writes session times ("1:56 pm on 8 May, 2023").
const LoCoMoTimeLayout = "3:04 pm on 2 January, 2006"

// parseSessionTime reads a session's time as LoCoMo writes it, and as a
// hand-edited file may: spaces doubled, the comma left out, "PM", a short
// month ("8 Sep, 2023").
func parseSessionTime(s string) (time.Time, error) {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	var err error
	for _, layout := range []string{LoCoMoTimeLayout, "3:04 pm on 2 January 2006", "3:04 pm on 2 Jan, 2006", "3:04 pm on 2 Jan 2006"} {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// ParseLoCoMo reads a LoCoMo file. Each conversation goes into channel, or,
// when channel is "", a channel named by its sample_id. A turn's time is
// its session's time plus one minute per turn before it; an image's
// caption is kept in the text ("[shares a photo: …]") since it is what the
// speaker showed.
func ParseLoCoMo(data []byte, channel string) ([]Conversation, error) {
	var samples []locomoSample
	if err := json.Unmarshal(data, &samples); err != nil {
		return nil, fmt.Errorf("not a LoCoMo file (a JSON list of samples with sample_id, conversation, qa): %v", err)
	}
	var out []Conversation
	for si, s := range samples {
		name := fmt.Sprintf("sample %d (%s)", si+1, s.SampleID)
		c := Conversation{SampleID: s.SampleID, Channel: channel}
		if c.Channel == "" {
			c.Channel = s.SampleID
		}
		if err := store.ValidChannel(c.Channel); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var sessions []int
		for k := range s.Conversation {
			if m := sessionKey.FindStringSubmatch(k); m != nil {
				n, _ := strconv.Atoi(m[1])
				sessions = append(sessions, n)
			}
		}
		sort.Ints(sessions)
		for _, n := range sessions {
			var when string
			if raw, ok := s.Conversation[fmt.Sprintf("session_%d_date_time", n)]; ok {
				_ = json.Unmarshal(raw, &when)
			}
			t, err := parseSessionTime(when)
			if err != nil {
				return nil, fmt.Errorf("%s: session_%d_date_time %q is not like %q", name, n, when, "1:56 pm on 8 May, 2023")
			}
			var turns []locomoTurn
			if err := json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d", n)], &turns); err != nil {
				return nil, fmt.Errorf("%s: session_%d: %v", name, n, err)
			}
			for i, tu := range turns {
				text := tu.Text
				if tu.BlipCaption != "" {
					text += " [shares a photo: " + tu.BlipCaption + "]"
				}
				if strings.TrimSpace(text) == "" || tu.DiaID == "" {
					continue
				}
				c.Messages = append(c.Messages, &store.Message{
					Channel: c.Channel, Role: store.RoleUser, User: tu.Speaker, Kind: "group",
					Text: text, Time: t.Add(time.Duration(i) * time.Minute), ExternalID: diaID(tu.DiaID),
				})
			}
		}
		for _, q := range s.QA {
			c.QA = append(c.QA, Question{Question: q.Question, Answer: answerText(q.Answer), Evidence: CleanEvidence(q.Evidence), Category: q.Category})
		}
		out = append(out, c)
	}
	return out, nil
}

// CleanEvidence normalises LoCoMo evidence ids to the turns' own
// (diaID): "D8:6; D9:17" is two, "D:11:26" is "D11:26" and "D30:05" is
// "D30:5"; what names no turn ("D") is dropped.
func CleanEvidence(ev []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range ev {
		for _, m := range evidenceID.FindAllStringSubmatch(e, -1) {
			id := "D" + trimZeros(m[1]) + ":" + trimZeros(m[2])
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// diaID is a turn's id as CleanEvidence writes evidence: "D1:03" is
// "D1:3", so a turn and the evidence naming it agree however either was
// written. An id of another shape is kept as it is.
func diaID(id string) string {
	if m := evidenceID.FindStringSubmatch(id); m != nil && m[0] == strings.TrimSpace(id) {
		return "D" + trimZeros(m[1]) + ":" + trimZeros(m[2])
	}
	return id
}

// trimZeros drops a number's leading zeros ("05" is "5", "0" stays).
func trimZeros(n string) string {
	if t := strings.TrimLeft(n, "0"); t != "" {
		return t
	}
	return "0"
}

func answerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}
