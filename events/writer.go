package events

import (
	"context"
	"time"
)

// Writer makes the texts the log needs. The daemon fills it with a
// ScriptWriter, which runs the built-in prompt scripts event_title,
// event_summary and event_extraction (a persona may override each); tests
// of the log use a model-free fake. Every method may fail; the log then
// retries later and skips nothing.
type Writer interface {
	// TitleTopic titles a closed topic and scores its importance.
	TitleTopic(ctx context.Context, in TopicInput) (TopicTitle, error)
	// Summarize writes a day, week, month or year record from its children.
	Summarize(ctx context.Context, in RollupInput) (Summary, error)
	// Extract finds new facts about objects and relation lines in a topic.
	Extract(ctx context.Context, in ExtractInput) (Extraction, error)
}

// LogLine is one message of a topic's chat log, as a writer reads it.
type LogLine struct {
	Time    time.Time
	Speaker string // the person's name, the agent's name, or "system"
	Agent   bool   // said by the agent
	Text    string
}

// EarlierEvent is a recent record a topic may continue.
type EarlierEvent struct {
	ID    string
	Label string
	Title string
}

// TopicInput is a closed topic to title.
type TopicInput struct {
	Channel string
	Agent   string // the agent's name
	Lines   []LogLine
	// Omitted counts the messages left out of the middle of a long topic.
	Omitted int
	// Earlier are recent records of the channel the topic may continue.
	Earlier []EarlierEvent
	// Title is the title the agent gave when it closed the topic ("" when
	// none); the writer keeps it and only scores.
	Title string
}

// TopicTitle is the writer's answer for a topic.
type TopicTitle struct {
	Title      string   `json:"title"`
	Importance float64  `json:"importance"` // 0–1
	Includes   []string `json:"includes"`   // ids of Earlier records it continues
}

// RollupChild is a child record as a summary reads it.
type RollupChild struct {
	Label      string
	Title      string
	Importance float64
}

// RollupInput is a period to summarise.
type RollupInput struct {
	Channel  string
	Agent    string
	Level    Level
	Label    string
	Children []RollupChild
}

// Summary is the writer's answer for a period.
type Summary struct {
	Title      string  `json:"title"`
	Importance float64 `json:"importance"`
}

// KnownObject is an object the extraction may add to.
type KnownObject struct {
	Name   string
	Kind   string
	Blocks []string
}

// KnownLine is a valid relation line the extraction may reinforce or
// contradict.
type KnownLine struct {
	ID   string
	A, B string // object names
	Text string
}

// ExtractInput is a titled topic to extract facts and relation lines from.
type ExtractInput struct {
	Channel string
	Agent   string
	Title   string
	Lines   []LogLine
	Omitted int
	Objects []KnownObject
	Known   []KnownLine
}

// Extraction is what a topic adds. It only adds: new blocks, new lines,
// reinforcement of lines that the topic shows again, and the marking of
// lines the topic contradicts.
type Extraction struct {
	Facts      []Fact    `json:"facts"`
	Lines      []NewLine `json:"lines"`
	Reinforce  []string  `json:"reinforce"`  // ids of known lines
	Contradict []string  `json:"contradict"` // ids of known lines
}

// Fact is a new info block about an object.
type Fact struct {
	Object string `json:"object"` // its name
	Kind   string `json:"kind"`   // person, agent or thing
	Text   string `json:"text"`
}

// NewLine is a new relation line between two objects.
type NewLine struct {
	A        string  `json:"a"`
	B        string  `json:"b"`
	Text     string  `json:"text"`
	Strength float64 `json:"strength"` // 0–1: how much this contact adds
}
